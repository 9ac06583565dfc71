import { randomBytes } from 'node:crypto';
import { EndpointOut } from '../../svix/codecs';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import { parkedUrlOf } from '../../zap/policy';
import type { SvixClient } from '../setup/client';
import { attemptsOf, MAX_WAIT_MS, retryWait, seconds, timeOf, UNSEEN, within, type Attempt } from './attempts';

/**
 * What a Zap turned off and on again rests on: Svix takes the parked URL the app points the Zap's endpoint at,
 * and a retry made after the endpoint's url is changed goes to its new URL (the open-source worker reads the
 * endpoint afresh for each attempt, through a cache the API clears on every change). Svix Cloud documents
 * neither. Both are findings the account and the emulator must answer alike (run.ts, differences), unless the
 * account's wait ran out ("not yet seen…"), which settles nothing.
 */

/** Every status Svix may answer, so that each is recorded instead of raised. */
const ANY_STATUS = [400, 401, 403, 404, 405, 409, 410, 413, 422, 429, 500, 501, 502, 503];

export interface ParkingQuestions {
  /** Through the relay: each answer's shape is checked. */
  account: SvixClient;
  /** Svix itself, not through the relay: for looking again and again at the attempts (kept out of the table). */
  direct: SvixClient;
  appId: string;
  /** Sends one AUCTION_STATUS_CHANGE message with the account's key; its id. */
  emit: () => Promise<string>;
  /** The target's retry schedule (Svix's, or the emulator's compressed one): how long a retry may take. */
  retryScheduleMs?: readonly number[];
  finding: (name: string, read: () => Promise<string>) => Promise<void>;
}

export const PARKED_URL_QUESTION = 'a parked URL (https://parked.invalid/zapier/…) on endpoint create and PATCH';
export const RETRY_AFTER_PATCH_QUESTION = "an attempt after a PATCH of the endpoint's url: where it goes";

export const askParking = async (ask: ParkingQuestions): Promise<void> => {
  const { account, direct, appId, finding } = ask;
  const app = `/api/v1/app/${appId}`;
  const made: string[] = [];
  const create = async (url: string) => {
    const answer = await account.call({
      method: 'POST',
      path: `${app}/endpoint`,
      body: { url, eventTypes: [EVENT_TYPE_NAME] },
      action: 'creating an endpoint',
      accept: ANY_STATUS,
    });
    const endpoint = answer.status < 300 ? account.decode(EndpointOut, answer.body, 'creating an endpoint') : undefined;
    if (endpoint) made.push(endpoint.id);
    return { status: answer.status, endpoint };
  };
  const patch = async (id: string, url: string) => {
    const answer = await account.call({
      method: 'PATCH',
      path: `${app}/endpoint/${id}`,
      body: { url },
      action: "changing an endpoint's url",
      accept: ANY_STATUS,
    });
    const endpoint =
      answer.status < 300 ? account.decode(EndpointOut, answer.body, "changing an endpoint's url") : undefined;
    return { status: answer.status, endpoint };
  };
  const unique = () => randomBytes(6).toString('hex');

  try {
    // The URL the app parks a Zap's endpoint at (a name that never resolves), as the app makes it.
    await finding(PARKED_URL_QUESTION, async () => {
      const created = await create(parkedUrlOf(`contract-check-${unique()}`));
      const other = await create(`https://contract-check.invalid/to-park/${unique()}`);
      if (!other.endpoint) return `create ${created.status}; PATCH not asked (an endpoint answered ${other.status})`;
      const patched = await patch(other.endpoint.id, parkedUrlOf(`contract-check-${unique()}`));
      return `create ${created.status}; PATCH ${patched.status}`;
    });

    // A message to an endpoint whose URL fails, its first attempt seen, then the endpoint pointed elsewhere (a
    // URL that fails too, so that the retries go on): where the first attempt made after the PATCH went.
    await finding(RETRY_AFTER_PATCH_QUESTION, async () => {
      const { endpoint } = await create(`https://contract-check.invalid/before/${unique()}`);
      if (!endpoint) throw new Error('Svix made no endpoint to ask with');
      const message = await ask.emit();
      const attempts = () => attemptsOf(direct, appId, endpoint.id, message);
      const first = await within(MAX_WAIT_MS, 250, async () => ((await attempts()).length > 0 ? true : undefined));
      if (!first) return `${UNSEEN} within ${seconds(MAX_WAIT_MS)}: no first attempt`;
      const pointed = await patch(endpoint.id, `https://contract-check.invalid/after/${unique()}`);
      const changedAt = pointed.endpoint?.updatedAt === undefined ? NaN : Date.parse(pointed.endpoint.updatedAt);
      if (!pointed.endpoint || Number.isNaN(changedAt)) return `the PATCH answered ${pointed.status}`;
      const newUrl = pointed.endpoint.url;
      // Svix's clock on both sides: an attempt stamped after the change read the endpoint after it. (This look
      // goes through the relay, so the listing's answer is checked against the contract too.)
      const before = (await attemptsOf(account, appId, endpoint.id, message)).filter(
        (attempt) => timeOf(attempt) <= changedAt,
      );
      const wait = retryWait(ask.retryScheduleMs, before.length);
      if (!wait) return `${UNSEEN}: no retry was left after the PATCH`;
      const after = await within(wait.waitMs, wait.everyMs, async (): Promise<Attempt | undefined> =>
        (await attempts()).find((attempt) => timeOf(attempt) > changedAt),
      );
      if (!after)
        return `${UNSEEN} within ${seconds(wait.waitMs)}: no attempt after the PATCH (the next retry due ${seconds(wait.dueMs)} after the last)`;
      if (after.url === newUrl) return 'the next attempt went to the new URL';
      if (after.url === endpoint.url) return 'the next attempt went to the old URL';
      return `the next attempt went to another URL (${after.url})`;
    });
  } finally {
    // Their retries end with them (the Consumer App is deleted at the end in any case).
    for (const id of made)
      await account
        .call({ method: 'DELETE', path: `${app}/endpoint/${id}`, action: 'deleting an endpoint', accept: ANY_STATUS })
        .catch(() => undefined);
  }
};
