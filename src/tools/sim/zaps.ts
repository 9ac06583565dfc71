import type { SubscribeData } from '../../models/inbound';

/**
 * Zapier's side of the Zaps in a simulated run: the subscription each hook URL serves (what a perform of a delivery
 * there is handed; none: Zapier answers 404, or 410 once unsubscribed, and takes nothing), each Zap's current
 * subscription as Zapier keeps it, and the endpoints each Zap's subscribes made. Turning Zaps on and off is the
 * app's own code (src/zap/life.ts) against the simulated Svix; this only keeps what Zapier would.
 */

export type Subscribed = { hook: string; data: SubscribeData };
/** When a Zap was off (world's clock): from its unsubscribe to the start of its next subscribe (`until`; none yet:
 * still off) and that subscribe's return (`returned`), and whether the unsubscribe parked its endpoint. */
export type Off = { zap: number; from: number; until?: number; returned?: number; parked: boolean } & {
  /** Whether z.cache stored the unsubscribe's mark, and its key. */
  marked?: boolean;
  markKey?: string;
};

export class SimZaps {
  private readonly served = new Map<string, SubscribeData>();
  /** Per Zap: its subscription (none while it is off), the endpoints it made, and how it is named. */
  private readonly current: Array<Subscribed | undefined> = [];
  private readonly made: Array<Set<string>> = [];
  readonly offs: Off[] = [];
  /** Endpoints whose unsubscribe Svix failed and whose mark z.cache did not keep (a known limit). */
  readonly unmarked = new Set<string>();
  /** Edits of Zaps Zapier names to no call: from the first call to the end of the second (none yet: under way). */
  readonly unnamedEdits: Array<{ zap: number; from: number; until?: number }> = [];
  private readonly offSince = new Map<number, Off>();
  private hooks = 0;

  /** A target URL Zapier makes for an activation. */
  newHook = (): string => `https://hooks.zapier.test/hooks/standard/${(this.hooks += 1)}/`;

  /** What a delivery to this URL is handed now, if Zapier serves it. */
  servedAt = (url: string): SubscribeData | undefined => this.served.get(url);

  /** The Zap's subscription as Zapier keeps it (none: off). */
  subscriptionOf = (zap: number): Subscribed | undefined => this.current[zap];

  /** The endpoints the Zap's subscribes made, by id. */
  endpointsOf = (zap: number): string[] => [...(this.made[zap] ?? [])];

  /** A subscribe begun at `began` returned at `at`: Zapier keeps it now, and serves its URL from `serve` on (the
   * world calls it). */
  subscribed(zap: number, hook: string, data: SubscribeData, at: number, began = at): () => void {
    this.current[zap] = { hook, data };
    (this.made[zap] ??= new Set()).add(data.id);
    const off = this.offSince.get(zap);
    if (off) Object.assign(off, { until: began, returned: at });
    this.offSince.delete(zap);
    return () => {
      // Served unless it was turned off before Zapier got to it.
      if (this.current[zap]?.data === data) this.served.set(hook, data);
    };
  }

  /** An unsubscribe is called: Zapier stops serving the subscription at once; the Zap is off if it was its own. */
  unsubscribed(zap: number, old: Subscribed, at: number): Off | undefined {
    if (this.served.get(old.hook) === old.data) this.served.delete(old.hook);
    if (this.current[zap] !== old) return undefined;
    this.current[zap] = undefined;
    const off: Off = { zap, from: at, parked: false };
    this.offs.push(off);
    this.offSince.set(zap, off);
    return off;
  }

  /** An edit of a Zap named to no call begins. */
  unnamedEdit(zap: number, at: number): { zap: number; from: number; until?: number } {
    const edit = { zap, from: at };
    this.unnamedEdits.push(edit);
    return edit;
  }

  /** The Zap whose subscribe made this endpoint, if one did. */
  zapOf = (endpointId: string): number | undefined => {
    const zap = this.made.findIndex((ids) => ids?.has(endpointId) === true);
    return zap < 0 ? undefined : zap;
  };

  /** Every Zap's subscription as Zapier keeps it at the end. */
  subscriptions = (): Subscribed[] => this.current.flatMap((each) => (each ? [each] : []));
}
