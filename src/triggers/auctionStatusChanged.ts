import { isRight } from 'fp-ts/Either';
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { claimKey, claimOnce, isTooOldToRemember, SIGNING_WINDOW } from '../delivery/claim';
import { CLAIM_MIN_MS, SWEEP_EVERY_MS } from '../limits';
import { endpointKey, known as newKnown } from '../delivery/known';
import { verify } from '../delivery/verify';
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
import { RawRequest, SubscribeData } from '../models/inbound';
import { connectionScope } from '../svix/connection';
import { isMessageId } from '../svix/ids';
import { timeOfSvixId } from '../svix/ksuid';
import { callerOf, type Caller } from '../svix/client';
import { halt, ioOf, raise, requestSettings, type Io } from '../zapier/io';
import { checkEnvelope, signer, signingHeaders } from '../svix/signature';
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

  type Items = AuctionStatusChangedItem[];
  /**
   * A delivery, on the ports it runs on (Zapier's z, or the simulation's), top to bottom: read the request, verify it
   * (src/delivery/verify.ts), decode the event at the edge (its body when the trusted secret signed it, else Svix's
   * copy), claim it and apply the Zap's options; now and then, sweep the Consumer App.
   */
  const deliver = async (io: Io, bundle: DeliveryBundle): Promise<Items> => {
    const { clock } = runtime;
    const arrivedAt = clock.now();
    const deadline = arrivedAt + requestSettings.operationBudgetMs;
    const zap = SubscribeData.decode(bundle.subscribeData);
    if (!isRight(zap)) throw new io.errors.Error(MESSAGES.missingSubscription, 'MissingSubscription', 400);
    const raw = RawRequest.decode(bundle.rawRequest);
    if (!isRight(raw)) return refuse(io, 'no-body');
    const { content, headers = {} } = raw.right;
    const envelope = checkEnvelope(signingHeaders(headers), Math.floor(arrivedAt / 1000), SIGNING_WINDOW);
    if (!envelope.ok) return refuse(io, envelope.refusal);
    const { id, timestamp, signature, seconds } = envelope;
    const createdAt = isMessageId(id) ? timeOfSvixId(id) : undefined;
    const occurredAtMs = eventTimeOf(createdAt, seconds * 1000);
    if (isTooOldToRemember(occurredAtMs, arrivedAt)) return refuse(io, 'event-too-old');

    const subscription = zap.right;
    const connection = connectionScope(bundle.authData);
    // An edit's endpoint is sent messages from as far back as the Zap was on.
    const madeAt = Math.min(timeOfSvixId(subscription.id) ?? subscription.checkedAt, subscription.on);
    const known = runtime.endpoints.get(endpointKey(connection, subscription.id), () =>
      newKnown(subscription.secret, subscription.checkedAt, madeAt),
    );
    // One caller, and so one deadline for every Svix call, counted from the delivery's arrival.
    let caller: Caller | undefined;
    const callerFor = () => (caller ??= callerOf(io, bundle, 'zap-run', arrivedAt, clock.now));
    const signedWith = signer(id, timestamp, signature, content);
    const delivery = { id, createdAt, signedWith, arrivedAt, deadline };
    const verdict = await verify({ clock, caller: callerFor, endpointId: subscription.id, known, delivery });

    if (verdict.kind === 'halt') return halt(io, haltMessage(verdict.why));
    if (verdict.kind === 'unchecked') return raise(io, couldNotCheck(id));
    // A call Svix refused (the connection's key, say): what to do, and the event to send again.
    if (verdict.kind === 'refused')
      return raise(io, (verdict.call === 'read' ? couldNotRead : couldNotConfirm)(id)(verdict.failure));
    const parsed = verdict.kind === 'signed' ? parseBody(content) : { ok: true as const, body: verdict.event };
    const payload = parsed.ok ? decodePayload(parsed.body) : parsed;
    if (!payload.ok) throw new io.errors.Error(payload.message, 'InvalidPayload', 400);
    const items = await runOnce(io, bundle, subscription, { ...payload, messageId: id, occurredAtMs, deadline });

    // Now and then, once its own work is done, a delivery sweeps the Consumer App of what no Zap will use again.
    // A connection it cannot read sweeps nothing: its run has said so.
    if (sweepDue(connection))
      await life()
        .sweepBriefly(callerFor(), clock)
        .catch(() => undefined);
    return items;
  };

  const perform = async (z: ZObject, bundle: Bundle): Promise<Items> => {
    if (bundle.rawRequest !== undefined && bundle.rawRequest !== null) return deliver(ioOf(z), bundle);
    // A live Zap's run always carries a delivery; the CLI's bare `invoke trigger` answers as Test trigger.
    const subscribed = (bundle.subscribeData !== undefined && bundle.subscribeData !== null) || bundle.targetUrl;
    return subscribed ? refuse(z, 'no-delivery') : performList(z, bundle);
  };

  type Event = Extract<PayloadResult, { ok: true }> & { messageId: string; occurredAtMs: number; deadline: number };
  /** The Zap's filters fail closed. Claimed, then filtered: a message its options skip is claimed too, so an edit
   * that widens them does not run it when Svix sends it again (its retries, carried across the edit). */
  const runOnce = async (io: Io, bundle: DeliveryBundle, zap: SubscribeData, event: Event): Promise<Items> => {
    const { clock } = runtime;
    const filters = filtersOf(io, bundle);
    const item = toTriggerItem(event.payload, event, event.extras.values);
    // Run each message once per Zap, however often and through whichever of its endpoints it is delivered.
    const claimBy = Math.max(event.deadline, clock.now() + CLAIM_MIN_MS);
    const claim = () => claimOnce(clock, io, claimKey(zap.zap, item.id), runtime.claimToken(), claimBy);
    // An event the options skip, the first time: quietly, or in the Zap's history where the person asked.
    const skip = (by: Skipped): Items => (filters.showSkipped ? halt(io, skippedMessage(by, item.status)) : []);
    const skipped = skippedBy(item, filters);
    if (skipped) return (await claim()) ? skip(skipped) : [];
    if (!filters.skipOutdated) return (await claim()) ? [item] : [];
    // The auction's newest run read beside the claim. Skipped as outdated, it is claimed all the same: an edit that
    // turns the option off does not run it when Svix sends it again.
    const bounded = withinDeadline(clock, io, event.deadline);
    const [newest, claimed] = await Promise.all([newestRun(bounded, zap.zap, item.auctionUuid), claim()]);
    if (!claimed) return [];
    if (newest > event.occurredAtMs) return skip('skipOutdated');
    await recordNewest(bounded, zap.zap, item.auctionUuid, event.occurredAtMs, newest);
    return [item];
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
