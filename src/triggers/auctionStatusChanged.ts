import { isRight } from 'fp-ts/Either';
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { claimKey, isTooOldToRemember, SIGNING_WINDOW } from '../delivery/claim';
import { CLAIM_MIN_MS, SWEEP_EVERY_MS } from '../limits';
import { claimOnce, verify, type Verdict } from '../delivery/driver';
import { withinDeadline } from '../zapier/cache';
import type { Runtime } from '../delivery/runtime';
import {
  auctionStatusChangedOutputFields,
  auctionStatusChangedSample,
  eventTimeOf,
  toTriggerItem,
  type AuctionStatusChangedItem,
} from '../fields/auctionStatusChanged';
import { extraOutputFieldsOf } from '../fields/extraFields';
import { auctionStatusChangedInputFields } from '../fields/inputFields';
import { decodePayload, parseBody, type PayloadResult } from '../fields/payload';
import type { OutputField } from '../fields/zapFields';
import {
  couldNotCheck,
  couldNotConfirm,
  couldNotRead,
  haltMessage,
  MESSAGES,
  refusalMessage,
  skippedMessage,
  unreadableFilter,
  type DeliveryRefusal,
} from '../messages';
import { claimScopeOf, RawRequest, SubscribeData } from '../models/inbound';
import { connectionScope } from '../svix/connection';
import { isMessageId } from '../svix/ids';
import { timeOfProviderId } from '../svix/ksuid';
import { callerOf, type Caller } from '../svix/client';
import { halt, ioOf, raise, requestSettings, type Io } from '../zapier/io';
import { checkEnvelope, signatureCount, signer, signingHeaders } from '../svix/signature';
import { checkZapEndpoint } from '../zap/endpoint';
import type * as ZapLife from '../zap/life';
import { recentAuctioneers, recentStatuses } from './choices';
import { passesFilters, readFilters, skippedBy, type Filters, type Skipped } from '../fields/filters';
import { newestRun, recordNewest } from './outdated';
import { recentEvents } from './recentEvents';

/** Auction Status Changed: subscribe, unsubscribe, a delivery's perform, and Test trigger, for one runtime. */

export const TRIGGER_KEY = 'auction_status_changed';
/** Recent events read to label extra fields: a few are enough to see what the service sends. */
const EXTRA_FIELDS_LIMIT = 25;

/** Turning a Zap on and off, loaded on first use (Node keeps it): no delivery needs it, so processes start sooner. */
const life = (): typeof ZapLife => require('../zap/life');

const refuse = (io: Pick<Io, 'errors'>, why: DeliveryRefusal): never => halt(io, refusalMessage(why));
/** What a delivery's perform reads of the bundle Zapier hands it. */
export type DeliveryBundle = Pick<Bundle, 'authData' | 'inputData' | 'rawRequest' | 'subscribeData'>;

export const operationsFor = (runtime: Runtime) => {
  /** When this process last swept each connection's Consumer App from a delivery (at most 1,000 remembered). */
  const swept = new Map<string, number>();
  /**
   * Whether a delivery of this connection should sweep its Consumer App now, from the note this process keeps (no
   * call, and zap/life.ts is loaded only then): every SWEEP_EVERY_MS, counted from its first delivery there, so that
   * a cold process's delivery never waits for a sweep.
   */
  const sweepDue = (connection: string): boolean => {
    const now = runtime.clock.now();
    const last = swept.get(connection);
    if (last !== undefined && now - last < SWEEP_EVERY_MS) return false;
    if (swept.size >= 1_000) swept.clear();
    swept.set(connection, now);
    return last !== undefined;
  };
  // On the ports they run on: Zapier's z, or the simulation's (a Zap's life there is this code's, too).
  const performSubscribe = (z: ZObject | Io, bundle: ZapLife.ZapBundle) =>
    life().subscribeZap(z, bundle, runtime.clock);
  const performUnsubscribe = (z: ZObject | Io, bundle: ZapLife.ZapBundle) =>
    life().unsubscribeZap(z, bundle, runtime.clock);

  type Items = AuctionStatusChangedItem[] | Promise<AuctionStatusChangedItem[]>;
  /**
   * A delivery, on the ports it runs on (Zapier's z, or the simulation's): verified (src/delivery), then decoded
   * at the edge, its body when the current secret signed it, else Svix's copy. Not async: see perform.
   */
  const deliver = (io: Io, bundle: DeliveryBundle): Items => {
    const arrivedAt = runtime.clock.now();
    const deadline = arrivedAt + requestSettings.operationBudgetMs;
    const zap = SubscribeData.decode(bundle.subscribeData);
    if (!isRight(zap)) throw new io.errors.Error(MESSAGES.missingSubscription, 'MissingSubscription', 400);
    const raw = RawRequest.decode(bundle.rawRequest);
    if (!isRight(raw)) return refuse(io, 'no-body');
    const { content, headers = {} } = raw.right;
    const envelope = checkEnvelope(signingHeaders(headers), Math.floor(arrivedAt / 1000), SIGNING_WINDOW);
    if (!envelope.ok) return refuse(io, envelope.refusal);
    const { id, timestamp, signature, seconds } = envelope;
    const createdAt = isMessageId(id) ? timeOfProviderId(id) : undefined;
    const occurredAtMs = eventTimeOf(createdAt, seconds * 1000);
    if (isTooOldToRemember(occurredAtMs, arrivedAt)) return refuse(io, 'event-too-old');
    const { checkedAt = 0, secret, on } = zap.right;
    const connection = connectionScope(bundle.authData);
    const key = `${connection}\u0000${zap.right.id}`;
    const sub = { id: zap.right.id, secret, checkedAt, key, on };
    const signatures = signatureCount(signature);
    const signedWith = signer(id, timestamp, signature, content);
    const delivery = { id, createdAt, signedAt: seconds * 1000, signatures, signedWith, arrivedAt, deadline };
    // One caller, and so one deadline (counted from the start, waits included), for every provider call.
    let caller: Caller | undefined;
    const callerFor = () => (caller ??= callerOf(io, bundle, 'zap-run', arrivedAt, runtime.clock.now));
    const decoded = (verdict: Verdict) => {
      if (verdict.kind === 'halt') return halt(io, haltMessage(verdict.why));
      if (verdict.kind === 'unchecked') return raise(io, couldNotCheck(id));
      // A call Svix refused (the connection's key, say): what to do, and the event to send again.
      if (verdict.kind === 'refused')
        return raise(io, (verdict.call === 'read' ? couldNotRead : couldNotConfirm)(id)(verdict.failure));
      const parsed = verdict.kind === 'signed' ? parseBody(content) : { ok: true as const, body: verdict.event };
      const payload = parsed.ok ? decodePayload(parsed.body) : parsed;
      if (!payload.ok) throw new io.errors.Error(payload.message, 'InvalidPayload', 400);
      return runOnce(io, bundle, zap.right, { ...payload, messageId: id, occurredAtMs, deadline });
    };
    const verdict = verify(runtime, io, callerFor, sub, delivery);
    const items = verdict instanceof Promise ? verdict.then(decoded) : decoded(verdict);
    // Now and then, once its own work is done, a delivery sweeps the Consumer App of what no Zap will use again.
    if (!sweepDue(connection)) return items;
    return Promise.resolve(items).then(async (ran) => {
      // A connection it cannot read sweeps nothing: its run has said so.
      await Promise.resolve()
        .then(() => life().sweepBriefly(callerFor(), runtime.clock))
        .catch(() => undefined);
      return ran;
    });
  };

  // Not async: the usual delivery makes no promise beyond its claim's; core runs it inside a promise.
  const perform = (z: ZObject, bundle: Bundle): Items => {
    if (bundle.rawRequest !== undefined && bundle.rawRequest !== null) return deliver(ioOf(z), bundle);
    // A live Zap's run always carries a delivery; the CLI's bare `invoke trigger` answers as Test trigger.
    const subscribed = (bundle.subscribeData !== undefined && bundle.subscribeData !== null) || bundle.targetUrl;
    return subscribed ? refuse(z, 'no-delivery') : performList(z, bundle);
  };

  type Event = Extract<PayloadResult, { ok: true }> & { messageId: string; occurredAtMs: number; deadline: number };
  /** The Zap's filters fail closed. Claimed, then filtered: a message its options skip is claimed too, so an edit
   * that widens them does not run it when Svix sends it again (its retries, carried across the edit). */
  const runOnce = (io: Io, bundle: DeliveryBundle, zap: SubscribeData, event: Event): Items => {
    const filters = filtersOf(io, bundle);
    const item = toTriggerItem(event.payload, event, event.extras.values);
    const skipped = skippedBy(item, filters);
    // An event the options skip, the first time: quietly, or in the Zap's history where the person asked.
    const skip = (by: Skipped, claimed: boolean): AuctionStatusChangedItem[] =>
      claimed && filters.showSkipped ? halt(io, skippedMessage(by)) : [];
    // Run each message once per Zap, however often and through whichever of its endpoints it is delivered.
    const scope = claimScopeOf(zap);
    const claim = <T>(then: (claimed: boolean) => T) => {
      const claimBy = Math.max(event.deadline, runtime.clock.now() + CLAIM_MIN_MS);
      return claimOnce(runtime, io, claimKey(scope, item.id), zap.cacheHonoursNx, claimBy, then);
    };
    if (skipped) return claim((claimed) => skip(skipped, claimed));
    if (!filters.skipOutdated) return claim((claimed) => (claimed ? [item] : []));
    const bounded = withinDeadline(runtime.clock, io, event.deadline); // as the claim's and the machine's calls do
    return (async () => {
      // The auction's newest run read beside the claim. Skipped as outdated, it is claimed all the same: an edit
      // that turns the option off does not run it when Svix sends it again.
      const [newest, claimed] = await Promise.all([
        newestRun(bounded, scope, item.auctionUuid),
        Promise.resolve(claim((won) => won)),
      ]);
      if (claimed && newest > event.occurredAtMs) return skip('skipOutdated', true);
      if (!claimed) return [];
      await recordNewest(bounded, scope, item.auctionUuid, event.occurredAtMs, newest);
      return [item];
    })();
  };

  const filtersOf = (io: Pick<Io, 'errors'>, bundle: Pick<Bundle, 'inputData'>): Filters => {
    const read = readFilters(bundle.inputData);
    if (!read.ok) throw new io.errors.Error(unreadableFilter(read.field), 'InvalidFilter', 400);
    return read.filters;
  };

  /**
   * Test trigger: the Consumer App's real recent events, as perform maps them. With none, an empty list, never the
   * built-in sample dressed as an event: the Zap editor then says it found none and offers to skip the test, and
   * only a skipped test uses the sample (Zapier's check D006 and its sample-data guide).
   */
  const performList = async (z: ZObject, bundle: Bundle): Promise<AuctionStatusChangedItem[]> => {
    const filters = filtersOf(z, bundle);
    const caller = callerOf(z, bundle, 'zap-editor');
    await checkZapEndpoint(caller, bundle.subscribeData);
    await life().sweep(caller, runtime.clock);
    const { items, firstProblem } = await recentEvents(z, bundle);
    if (items.length === 0 && firstProblem !== undefined) throw new z.errors.Error(firstProblem, 'InvalidPayload', 400);
    return items.filter((item) => passesFilters(item, filters));
  };

  /** Labels for the extra fields the auction service sent lately; anything that goes wrong gives none. */
  const extraOutputFields = (z: ZObject, bundle: Bundle): Promise<OutputField[]> =>
    recentEvents(z, bundle, EXTRA_FIELDS_LIMIT).then(
      ({ items, extraLabels }) => extraOutputFieldsOf(items, extraLabels),
      () => [],
    );

  return { performSubscribe, performUnsubscribe, perform, deliver, performList, extraOutputFields };
};

export const auctionStatusChanged = (runtime: Runtime) => {
  const { performSubscribe, performUnsubscribe, perform, performList, extraOutputFields } = operationsFor(runtime);
  const inputFields = auctionStatusChangedInputFields({
    statuses: recentStatuses.key,
    auctioneers: recentAuctioneers.key,
  });
  // Zapier's schema takes no help text for output fields: it is for the guide (docs/guide.md).
  const outputFields = [...auctionStatusChangedOutputFields.map(({ helpText, ...field }) => field), extraOutputFields];
  return defineTrigger({
    key: TRIGGER_KEY,
    noun: 'Auction',
    display: {
      label: 'Auction Status Changed',
      description: 'Triggers when an auction is created or its status changes.',
    },
    operation: {
      type: 'hook',
      inputFields,
      performSubscribe,
      performUnsubscribe,
      perform,
      performList,
      sample: auctionStatusChangedSample,
      outputFields,
    },
  });
};
