import type { SubscribeData } from '../../models/inbound';
import type { SimSvix } from './svix';

/**
 * The Zaps on the simulated app, as Zapier and Svix keep them between them: each Zap's endpoints (one, or two while
 * an edit is under way), the target URL each delivers to (a hook), and the subscription each hook serves, which is
 * what a perform of a delivery Zapier takes there is handed. An edit is run as the app's subscribe and unsubscribe
 * run it (src/zap/life.ts): a new endpoint of its own, with a new secret, at the same hook or a new one; the
 * old endpoint deleted (its pending attempts end with it, a read of its secret answers 404); what the app asks Svix to send again, sent.
 */

export class SimZaps {
  /** Per endpoint (by index in the app): its Zap, its hook, and whether it is deleted. */
  private readonly zapOf: number[] = [];
  private readonly hookOf: number[] = [];
  private readonly deleted = new Set<number>();
  /** The subscription each hook serves, while it is subscribed; the next new hook. */
  private readonly served = new Map<number, SubscribeData>();
  private nextHook: number;

  constructor(
    private readonly svix: SimSvix,
    subscriptions: readonly SubscribeData[],
  ) {
    this.nextHook = subscriptions.length;
    subscriptions.forEach((subscription, index) => {
      this.zapOf.push(index);
      this.hookOf.push(index);
      this.served.set(index, subscription);
    });
  }

  /** Whether Svix still sends to the endpoint. */
  live = (endpoint: number): boolean => !this.deleted.has(endpoint);

  /** The Zap's endpoints Svix sends to, oldest first. */
  endpointsOf = (zap: number): number[] =>
    this.zapOf.flatMap((of, endpoint) => (of === zap && this.live(endpoint) ? [endpoint] : []));

  /** The Zap's newest endpoint: where rotations, forgeries and junk go. */
  current = (zap: number): number => this.endpointsOf(zap).pop() ?? zap;

  /** What a perform of a delivery from this endpoint is handed: the subscription its hook serves now, if any (a
   * hook no longer subscribed answers 410, and Zapier takes nothing). */
  subscriptionFor = (endpoint: number): SubscribeData | undefined => this.served.get(this.hookOf[endpoint] ?? -1);

  /** A new subscription of the Zap: an endpoint of its own made now, at the hook of `like` or a new one. */
  subscribe(zap: number, like: number, sameHook: boolean, subscription: (endpoint: number) => SubscribeData): number {
    const made = this.svix.addEndpoint();
    const hook = sameHook ? (this.hookOf[like] ?? like) : (this.nextHook += 1);
    this.zapOf[made] = zap;
    this.hookOf[made] = hook;
    this.served.set(hook, subscription(made));
    return made;
  }

  /** An unsubscribe: the endpoint deleted, and its hook no longer served unless a newer endpoint serves it. */
  unsubscribe(endpoint: number): void {
    this.deleted.add(endpoint);
    this.svix.deleteEndpoint(endpoint);
    const hook = this.hookOf[endpoint];
    const shared = this.hookOf.some((other, index) => other === hook && index !== endpoint && this.live(index));
    if (hook !== undefined && !shared) this.served.delete(hook);
  }
}
