import { randomBytes } from 'node:crypto';
import { signatureHeader } from '../svix/signing';
import { isRight } from 'fp-ts/Either';
import app from '../../index';
import { EndpointSecretOut, ListResponseEndpointOut, MessageOut } from '../../svix/codecs';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import { AuctionService } from '../sandbox/auctions';
import { PlatformStandIn, platformInvoker } from '../sandbox/platform';
import { SvixClient, SvixFailure } from '../setup/client';
import { appUidFor, runSetup } from '../setup/setup';
import { SubscribeData } from '../../models/inbound';
import { RecordingRelay, type RecordedCall } from './proxy';
import { askCloud, CLOUD, lagOf } from './cloud';
import { UNSEEN } from './attempts';
import { askParking } from './parking';
import { schemaErrors, schemaFor } from './schemas';

/**
 * The contract suite: one set of cases, written once, that makes every call
 * the app and the set-up make, through their own code (the app through
 * Zapier's core, the set-up through its client), against a target: the
 * emulator, or a real Svix account. Each case says what it saw; the open
 * questions are findings that the account and the emulator must agree on,
 * and the questions only Svix Cloud answers (src/tools/contract/cloud.ts) are
 * findings printed for the record. All of it happens in a throwaway Consumer
 * App, deleted at the end.
 */

export interface Target {
  kind: 'emulator' | 'account';
  baseUrl: string;
  apiKey: string;
  /** How its retries are spaced (Svix's schedule unless given): the questions about retries wait that long. */
  retryScheduleMs?: readonly number[];
}

export interface CaseResult {
  name: string;
  ok: boolean;
  saw: string;
}

export interface CallRow {
  call: string;
  status: number;
  schema: string;
  ms: number;
}

export interface ContractRun {
  target: Target['kind'];
  appId?: string;
  cases: CaseResult[];
  /** The open questions, each a plain answer: "yes", "no (403)", "at once", "200, payload {expired: true}". */
  findings: Record<string, string>;
  calls: CallRow[];
  ok: boolean;
}

/** A name that says what the Consumer App is for, so anyone who finds it may delete it. */
export const CONTRACT_APP_PREFIX = 'Contract check of the Zapier integration (safe to delete)';

/**
 * The throwaway Consumer App a run works in, for whoever must delete it if the run is stopped: its uid is
 * chosen before the call that creates it, so it can be deleted even if that call's answer never came.
 */
export interface Cleanup {
  appUid?: string;
  appId?: string;
  /** The run's client: its calls in flight are waited for. */
  client?: SvixClient;
  /** The target itself, not through the run's relay (which may be stopped by then): it deletes the app. */
  remover?: SvixClient;
}

const SUBSCRIBE = 'triggers.auction_status_changed.operation.performSubscribe';
const PERFORM = 'triggers.auction_status_changed.operation.perform';

const idsOut = (path: string): string =>
  path.replace(/\b(app|ep|msg|integ)_[A-Za-z0-9]+/g, '{$1_id}').replace(/\bzapier-[0-9a-f]+/g, '{endpoint_uid}');

/** Each call the relay saw: its route, status, whether the answer has the contract's shape, its time. */
export const callRows = (calls: readonly RecordedCall[]): CallRow[] =>
  calls.map((call) => ({
    call: `${call.method} ${idsOut(call.path)}`,
    status: call.status,
    schema: schemaCheck(call),
    ms: Math.round(call.ms),
  }));

/** Whether an answer has the shape the contract gives it: "ok (Name)", "MISMATCH (…)", or "-" with no body. */
const schemaCheck = (call: RecordedCall): string => {
  try {
    const name = call.status === 0 ? undefined : schemaFor(call);
    if (!name) return '-';
    const [first] = schemaErrors(name, call.body);
    return first === undefined ? `ok (${String(name)})` : `MISMATCH (${String(name)}: ${first})`;
  } catch (error) {
    return `no schema known (${error instanceof Error ? error.message : String(error)})`;
  }
};

/** A delivery of `message` as Svix signs it with `secret`, in the form Zapier hands to perform. */
const delivery = (message: { id: string; payload: unknown }, secret: string) => {
  const content = JSON.stringify(message.payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = signatureHeader([secret], message.id, timestamp, content);
  return {
    method: 'POST',
    querystring: '',
    headers: { 'Http-Svix-Id': message.id, 'Http-Svix-Timestamp': timestamp, 'Http-Svix-Signature': signature },
    content,
  };
};

/** What a refusal said, in a case's words: the status and Svix's code, never a key. */
const refusal = (error: unknown): string => {
  if (error instanceof SvixFailure)
    return error.failure.kind === 'auth' ? 'no (refused the key)' : `no (${error.message.slice(0, 80)})`;
  if (error instanceof Error) return `no (${error.message.slice(0, 120)})`;
  return 'no';
};

/** Runs every case against `target`, in a Consumer App it creates and deletes. */
export const runContract = async (
  target: Target,
  options: { say?: (line: string) => void; cleanup?: Cleanup } = {},
): Promise<ContractRun> => {
  const say = options.say ?? (() => undefined);
  const cleanup = options.cleanup ?? {};
  const relay = new RecordingRelay(target.baseUrl);
  const platform = new PlatformStandIn();
  const serverUrl = await relay.start();
  await platform.start();
  const account = new SvixClient({ baseUrl: serverUrl, apiKey: target.apiKey });
  const invoke = platformInvoker({ app, platform, identity: { authId: 'contract', userId: 'contract' }, quiet: true });
  const cases: CaseResult[] = [];
  const findings: Record<string, string> = {};
  const check = async (name: string, run: () => Promise<string>): Promise<boolean> => {
    try {
      const saw = await run();
      cases.push({ name, ok: true, saw });
      say(`  ok    ${name}: ${saw}`);
      return true;
    } catch (error) {
      const saw = error instanceof Error ? error.message : String(error);
      cases.push({ name, ok: false, saw });
      say(`  FAIL  ${name}: ${saw}`);
      return false;
    }
  };
  const finding = async (name: string, read: () => Promise<string>): Promise<void> => {
    const answer = await read().catch(refusal);
    findings[name] = answer;
    say(`  saw   ${name}: ${answer}`);
  };

  let appId: string | undefined;
  try {
    const appName = `${CONTRACT_APP_PREFIX} ${new Date().toISOString()}`;
    let integrationKey = '';
    const remover = new SvixClient({ baseUrl: target.baseUrl, apiKey: target.apiKey });
    Object.assign(cleanup, { appUid: appUidFor(appName), client: account, remover });
    await check("set-up: Consumer App, event type and Zapier's integration key", async () => {
      const setup = await runSetup({ client: account, appName, integrationKey: 'ensure' });
      appId = setup.appId;
      Object.assign(cleanup, { appId, client: account });
      if (setup.integrationKey?.kind !== 'created') throw new Error('the set-up made no integration key');
      integrationKey = setup.integrationKey.key;
      return `Consumer App ${appId} created for this run; event type ${setup.eventType}; integration key made`;
    });
    if (!appId) throw new Error('no Consumer App to work in');
    const app_ = appId;
    const auctions = new AuctionService(account, app_);
    const messageById = async (client: SvixClient, id: string) => {
      const answer = await client.call({
        method: 'GET',
        path: `/api/v1/app/${app_}/msg/${id}`,
        action: 'reading a message by id',
      });
      return client.decode(MessageOut, answer.body, 'reading a message by id');
    };
    const newMessage = async () => {
      await auctions.emitNext(1);
      const emitted = auctions.emitted[auctions.emitted.length - 1];
      if (!emitted) throw new Error('the auction service sent no message');
      return messageById(account, emitted.messageId);
    };

    for (const [label, apiKey] of [
      ['API Access Key', target.apiKey],
      ['integration key', integrationKey],
    ] as const) {
      const authData = { apiKey, appId: app_, serverUrl };
      const client = new SvixClient({ baseUrl: serverUrl, apiKey });
      const targetUrl = `https://contract-check.invalid/hooks/standard/${randomBytes(6).toString('hex')}/`;
      await check(`${label}: connection test`, async () => {
        const result = await invoke('authentication.test', { authData });
        return `passed, labelled with ${JSON.stringify(result).includes(app_) ? 'the Consumer App' : 'something else'}`;
      });
      let subscription: SubscribeData | undefined;
      await check(`${label}: subscribe (and the event type)`, async () => {
        const made = SubscribeData.decode(await invoke(SUBSCRIBE, { authData, targetUrl, inputData: {} }));
        if (!isRight(made)) throw new Error('performSubscribe returned no endpoint');
        subscription = made.right;
        return `endpoint ${made.right.id}`;
      });
      // Zapier subscribes again when it lost the first answer, and keeps only the answer it got: the Zap's one
      // endpoint (its uid is taken: 409) pointed again, a generation on.
      await check(`${label}: subscribe again (Zapier retried): the same endpoint, pointed again`, async () => {
        const again = SubscribeData.decode(await invoke(SUBSCRIBE, { authData, targetUrl, inputData: {} }));
        if (!isRight(again)) throw new Error('performSubscribe returned no endpoint');
        if (again.right.id !== subscription?.id) throw new Error('a second endpoint was made');
        if (again.right.gen !== (subscription.gen ?? 0) + 1) throw new Error('the generation did not move on');
        subscription = again.right;
        return `endpoint ${again.right.id}, generation ${again.right.gen ?? '?'}`;
      });
      if (!subscription) continue;
      const zap = subscription;
      const bundle = { authData, subscribeData: zap, targetUrl, inputData: {} };
      const first = await newMessage();
      await finding(`${label}: may read a message by id`, async () =>
        (await messageById(client, first.id)).id === first.id ? 'yes' : 'no (another message)',
      );
      await check(`${label}: a delivery signed with the current secret runs`, async () => {
        const ran = await invoke(PERFORM, { ...bundle, rawRequest: delivery(first, zap.secret) });
        if (!JSON.stringify(ran).includes(first.id)) throw new Error('perform did not run it');
        return 'ran';
      });
      // The secret changes (as its owner may change it in Svix): a delivery signed with the new one reads it.
      await account.call({
        method: 'POST',
        path: `/api/v1/app/${app_}/endpoint/${zap.id}/secret/rotate`,
        body: { gracePeriodSeconds: 0 },
        action: 'rotating the secret',
      });
      const read = await account.call({
        method: 'GET',
        path: `/api/v1/app/${app_}/endpoint/${zap.id}/secret`,
        action: 'reading the secret',
      });
      const newSecret = account.decode(EndpointSecretOut, read.body, 'reading the secret').key;
      const second = await newMessage();
      await finding(`${label}: may read the endpoint's secret`, async () => {
        const ran = await invoke(PERFORM, { ...bundle, rawRequest: delivery(second, newSecret) });
        return JSON.stringify(ran).includes(second.id) ? 'yes' : 'no (the delivery did not run)';
      });
      // One signed with the replaced secret (it waited in Zapier's queue): Svix's record, listed by window, confirms it.
      const third = await newMessage();
      await finding(`${label}: may list messages by time window`, async () => {
        const ran = await invoke(PERFORM, { ...bundle, rawRequest: delivery(third, zap.secret) });
        return JSON.stringify(ran).includes(third.id) ? 'yes' : 'no (the delivery did not run)';
      });
      await check(`${label}: Test trigger (performList) shows recent events`, async () => {
        const listed = await invoke('triggers.auction_status_changed.operation.performList', bundle);
        if (!JSON.stringify(listed).includes(third.id)) throw new Error('the newest event is missing');
        return 'lists the newest event';
      });
      // Parked where nothing answers (or, should Svix refuse that URL, at the Zap's old one): kept for the Zap
      // turned on again, deleted 34 hours on.
      await check(`${label}: unsubscribe parks the endpoint`, async () => {
        const removed = await invoke('triggers.auction_status_changed.operation.performUnsubscribe', bundle);
        if (!JSON.stringify(removed).includes('true')) throw new Error('the endpoint was not parked');
        const listed = await account.call({
          method: 'GET',
          path: `/api/v1/app/${app_}/endpoint?limit=250`,
          action: 'listing endpoints',
        });
        const left = account.decode(ListResponseEndpointOut, listed.body, 'listing endpoints').data;
        const own = left.find((endpoint) => endpoint.id === zap.id);
        if (!own || own.metadata?.parked === undefined) throw new Error('the endpoint is not marked parked');
        return own.url.startsWith('https://parked.invalid/')
          ? 'parked at https://parked.invalid/…'
          : 'parked at its old URL (Svix refused the parked one)';
      });
    }

    const emit = async () => (await newMessage()).id;
    const retries = target.retryScheduleMs ? { retryScheduleMs: target.retryScheduleMs } : {};
    // A Zap turned off and on again: Svix takes the parked URL, and a retry after a PATCH goes to the new URL.
    await askParking({ account, direct: remover, appId: app_, emit, finding, ...retries });

    // What only Svix Cloud answers (rate limits, an integration key's routes, listing freshness, archived-type
    // messages, pacing on the plan, retention, recover and replay-missing, recover of a message being retried,
    // CORS): findings, printed, not compared.
    await askCloud({
      baseUrl: target.baseUrl,
      apiKey: target.apiKey,
      account,
      integration: new SvixClient({ baseUrl: serverUrl, apiKey: integrationKey }),
      appId: app_,
      emit,
      finding,
      ...retries,
    });

    // The open questions of the account itself, asked with the account's key.
    await finding('a message whose content was deleted: how Svix answers for it', async () => {
      const message = await newMessage();
      await account.call({
        method: 'DELETE',
        path: `/api/v1/app/${app_}/msg/${message.id}/content`,
        action: "deleting a message's content",
      });
      const after = await messageById(account, message.id);
      return JSON.stringify(after.payload) === '{"expired":true}'
        ? 'answers 200 with payload {"expired": true}'
        : `answers 200 with another payload (${typeof after.payload})`;
    });
    await finding('read-after-create lag: a message by id', async () => {
      await auctions.emitNext(1);
      const id = auctions.emitted[auctions.emitted.length - 1]?.messageId ?? '';
      return lagOf(
        async () =>
          await messageById(account, id).then(
            () => true,
            () => false,
          ),
      );
    });
    await finding('read-after-create lag: an endpoint by id', async () => {
      const created = await account.call({
        method: 'POST',
        path: `/api/v1/app/${app_}/endpoint`,
        body: { url: 'https://contract-check.invalid/lag', filterTypes: [EVENT_TYPE_NAME] },
        action: 'creating an endpoint',
      });
      const id =
        typeof created.body === 'object' && created.body !== null && 'id' in created.body
          ? String(created.body.id)
          : '';
      return lagOf(async () =>
        account.call({ method: 'GET', path: `/api/v1/app/${app_}/endpoint/${id}`, action: 'reading an endpoint' }).then(
          () => true,
          () => false,
        ),
      );
    });
  } catch (error) {
    cases.push({ name: 'the run', ok: false, saw: error instanceof Error ? error.message : String(error) });
  } finally {
    if (appId) {
      await check('clean-up: the Consumer App of this run deleted', async () => {
        await account.call({
          method: 'DELETE',
          path: `/api/v1/app/${appId ?? ''}`,
          action: 'deleting the Consumer App of this run',
        });
        cleanup.appId = undefined;
        return 'deleted';
      });
    }
    await platform.stop();
    await relay.stop();
  }
  const calls = callRows(relay.calls);
  // A Zap needs every "may" to be yes; an answer that is not the contract's shape is a failure wherever it comes from.
  const mayNot = Object.entries(findings).filter(
    ([question, answer]) => question.includes(': may ') && answer !== 'yes',
  );
  const misshapen = calls.filter((row) => row.schema.startsWith('MISMATCH'));
  for (const [question, answer] of mayNot) say(`  FAIL  ${question}: ${answer}, which a Zap needs`);
  for (const row of misshapen) say(`  FAIL  ${row.call} answered ${row.status}: ${row.schema}`);
  const ok = cases.every((result) => result.ok) && mayNot.length === 0 && misshapen.length === 0;
  return { target: target.kind, ...(appId ? { appId } : {}), cases, findings, calls, ok };
};

/**
 * Where the account and the emulator answered an open question differently: one line each (Cloud's own aside, and
 * an answer of the account's whose wait ran out, "not yet seen…", which settles nothing).
 */
export const differences = (account: ContractRun, emulator: ContractRun): string[] =>
  Object.entries(account.findings).flatMap(([question, answer]) => {
    if (question.startsWith(CLOUD) || answer.startsWith(UNSEEN)) return [];
    const emulated = emulator.findings[question];
    return emulated === answer
      ? []
      : [`${question}: the account answered "${answer}", the emulator "${emulated ?? 'nothing'}"`];
  });
