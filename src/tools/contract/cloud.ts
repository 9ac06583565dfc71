import { randomBytes } from 'node:crypto';
import { EndpointOut, ListResponseMessageOut } from '../../svix/codecs';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import { THROTTLE_RATE } from '../../zap/endpoint';
import { SvixClient } from '../setup/client';
import {
  attemptsOf,
  MANUAL,
  MAX_WAIT_MS,
  retryWait,
  SCHEDULED,
  seconds,
  SUCCESS,
  timeOf,
  UNSEEN,
  within,
} from './attempts';

/**
 * The questions only Svix Cloud can answer: its published server (svix-webhooks, server/svix-server) does not
 * settle them (docs/svix-fidelity.md lists them). Each is asked in the run's throwaway Consumer App and printed as a
 * finding, not a pass or a fail: the first run on a real account answers them all. Against the emulator they say
 * what the open-source server does. They are never compared between the two (see differences in run.ts).
 */

/** What every Cloud-only finding's name starts with. */
export const CLOUD = 'cloud:';

/** Every status Svix may answer, so that each is recorded instead of raised. */
const ANY_STATUS = [400, 401, 403, 404, 405, 409, 410, 413, 422, 429, 500, 501, 502, 503];

export interface CloudQuestions {
  /** Svix itself, not through the run's relay: for headers the relay does not pass on (Retry-After, CORS). */
  baseUrl: string;
  apiKey: string;
  /** Through the relay, with the account's key and with the integration key the set-up made. */
  account: SvixClient;
  integration: SvixClient;
  appId: string;
  /** Sends one AUCTION_STATUS_CHANGE message with the account's key; its id. */
  emit: () => Promise<string>;
  /** The target's retry schedule (Svix's, or the emulator's compressed one): how long a retry may take. */
  retryScheduleMs?: readonly number[];
  finding: (name: string, read: () => Promise<string>) => Promise<void>;
}

/** How long until `read` answers yes, asked at once and then every 100 ms for up to 10 s. */
export const lagOf = async (read: () => Promise<boolean>): Promise<string> => {
  const startedAt = Date.now();
  for (let tries = 0; tries < 100; tries += 1) {
    if (await read()) return tries === 0 ? 'at once' : `after ${Math.round(Date.now() - startedAt)} ms`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return 'not within 10 s';
};

export const askCloud = async (ask: CloudQuestions): Promise<void> => {
  const { account, integration, appId, finding } = ask;
  const app = `/api/v1/app/${appId}`;
  const status = (client: SvixClient, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: object) =>
    client
      .call({ method, path, ...(body ? { body } : {}), action: 'asking Svix Cloud', accept: ANY_STATUS })
      .then((answer) => answer.status);

  // Rate limits: how Svix answers many reads at once, and the Retry-After it gives (the app honours it).
  await finding(`${CLOUD} rate limit: 25 reads of the Consumer App at once`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 25 }, () =>
        fetch(`${ask.baseUrl}${app}`, { headers: { Authorization: `Bearer ${ask.apiKey}` } }).then(async (answer) => {
          await answer.arrayBuffer();
          return { status: answer.status, retryAfter: answer.headers.get('retry-after') };
        }),
      ),
    );
    const limited = answers.filter((answer) => answer.status === 429);
    if (limited.length === 0) return `no 429 (statuses ${[...new Set(answers.map((a) => a.status))].join(', ')})`;
    const waits = [...new Set(limited.map((answer) => answer.retryAfter ?? 'none'))].join(', ');
    return `${limited.length} answered 429, Retry-After ${waits}`;
  });

  // An integration key's routes: which the app and the set-up would need, and which Svix lets it use.
  await finding(`${CLOUD} an integration key's routes`, async () => {
    const message = await ask.emit();
    const routes: Array<[string, () => Promise<number>]> = [
      ['read the Consumer App', () => status(integration, 'GET', app)],
      ['list event types', () => status(integration, 'GET', '/api/v1/event-type')],
      ['read a message', () => status(integration, 'GET', `${app}/msg/${message}`)],
      ['post a message', () => status(integration, 'POST', `${app}/msg`, { eventType: EVENT_TYPE_NAME, payload: {} })],
      [
        'un-archive the event type',
        () => status(integration, 'PATCH', `/api/v1/event-type/${EVENT_TYPE_NAME}`, { archived: false }),
      ],
      ['delete a message content', () => status(integration, 'DELETE', `${app}/msg/${message}/content`)],
      ['list Consumer Apps', () => status(integration, 'GET', '/api/v1/app')],
    ];
    const seen: string[] = [];
    for (const [route, call] of routes) seen.push(`${route} ${await call()}`);
    return seen.join('; ');
  });

  // Listing freshness: Cloud may list from a read replica, so a message just sent may be missing a while.
  await finding(`${CLOUD} a message in the listing right after it is sent`, async () => {
    const id = await ask.emit();
    return lagOf(async () => {
      const listed = await account.call({
        method: 'GET',
        path: `${app}/msg`,
        query: { limit: '10', event_types: EVENT_TYPE_NAME },
        action: 'listing messages',
      });
      return account.decode(ListResponseMessageOut, listed.body, 'listing messages').data.some((m) => m.id === id);
    });
  });

  // Messages of an archived type: the open-source server takes them; its docs say new messages cannot be sent.
  // A throwaway type, so AUCTION_STATUS_CHANGE (which live Zaps need) is never archived; expunged at the end.
  await finding(`${CLOUD} a message of an archived event type`, async () => {
    const name = `CONTRACT_CHECK_${randomBytes(4).toString('hex').toUpperCase()}`;
    const path = `/api/v1/event-type/${name}`;
    await account.call({ method: 'POST', path: '/api/v1/event-type', body: { name, description: 'x' }, action: 'x' });
    try {
      await account.call({ method: 'DELETE', path, action: 'archiving an event type' });
      const sent = await status(account, 'POST', `${app}/msg`, { eventType: name, payload: { check: true } });
      return sent === 202 ? 'accepted (202)' : `refused (${sent})`;
    } finally {
      await account.call({ method: 'DELETE', path, query: { expunge: 'true' }, action: 'x', accept: ANY_STATUS });
    }
  });

  // Pacing on this account's plan: kept, refused, or ignored (the app paces a Zap's endpoint at 25 a second).
  await finding(`${CLOUD} throttleRate ${THROTTLE_RATE} on this account's plan`, async () => {
    const made = await account.call({
      method: 'POST',
      path: `${app}/endpoint`,
      body: { url: 'https://contract-check.invalid/paced', eventTypes: [EVENT_TYPE_NAME], throttleRate: THROTTLE_RATE },
      action: 'creating a paced endpoint',
      accept: ANY_STATUS,
    });
    if (made.status >= 400) return `refused (${made.status}): a Zap's endpoint is then made without pacing`;
    const kept = account.decode(EndpointOut, made.body, 'creating a paced endpoint').throttleRate;
    return kept === THROTTLE_RATE
      ? `accepted, kept at ${THROTTLE_RATE} a second`
      : `accepted, kept as ${kept ?? 'none'}`;
  });

  // Payload retention: the contract allows 1 to 90 days (the open-source server 5 to 90); plans may allow less.
  await finding(`${CLOUD} payload retention of 1 day, and of 90`, async () => {
    const kept = async (days: number) =>
      status(account, 'POST', `${app}/msg`, { eventType: EVENT_TYPE_NAME, payload: {}, payloadRetentionPeriod: days });
    return `1 day: ${await kept(1)}; 90 days: ${await kept(90)}`;
  });

  // What catches an endpoint up: recover (failed messages since a time) and replay-missing (Cloud's, never sent).
  await finding(`${CLOUD} recover and replay-missing on an endpoint`, async () => {
    const made = await account.call({
      method: 'POST',
      path: `${app}/endpoint`,
      body: { url: 'https://contract-check.invalid/recover', eventTypes: [EVENT_TYPE_NAME] },
      action: 'creating an endpoint',
    });
    const endpoint = account.decode(EndpointOut, made.body, 'creating an endpoint').id;
    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    const recover = await status(account, 'POST', `${app}/endpoint/${endpoint}/recover`, { since });
    const replay = await status(account, 'POST', `${app}/endpoint/${endpoint}/replay-missing`, { since });
    return `recover ${recover}; replay-missing ${replay}`;
  });

  // recover while a message is still being retried: the open-source worker sends a manual attempt once, and its
  // scheduled retries to that endpoint then end (the next is skipped). Whether Cloud's do: they carry a parked Zap's
  // messages, so a recover (or resend) of one could lose what the schedule would have carried.
  await finding(
    `${CLOUD} recover of a message still being retried: its scheduled retries after the manual attempt`,
    async () => {
      const direct = new SvixClient({ baseUrl: ask.baseUrl, apiKey: ask.apiKey });
      const made = await account.call({
        method: 'POST',
        path: `${app}/endpoint`,
        body: {
          url: `https://contract-check.invalid/retried/${randomBytes(6).toString('hex')}`,
          eventTypes: [EVENT_TYPE_NAME],
        },
        action: 'creating an endpoint',
      });
      const endpoint = account.decode(EndpointOut, made.body, 'creating an endpoint').id;
      try {
        const message = await ask.emit();
        const attempts = () => attemptsOf(direct, appId, endpoint, message);
        const first = await within(MAX_WAIT_MS, 250, async () => ((await attempts()).length > 0 ? true : undefined));
        if (!first) return `${UNSEEN} within ${seconds(MAX_WAIT_MS)}: no first attempt`;
        const since = new Date(Date.now() - 60 * 60 * 1000).toISOString();
        const recover = `recover ${await status(account, 'POST', `${app}/endpoint/${endpoint}/recover`, { since })}`;
        const manual = await within(MAX_WAIT_MS, 250, async () =>
          (await attempts()).find((attempt) => attempt.triggerType === MANUAL),
        );
        if (!manual) return `${recover}; ${UNSEEN} within ${seconds(MAX_WAIT_MS)}: no manual attempt`;
        const outcome = `${recover}; the manual attempt ${manual.status === SUCCESS ? 'succeeded' : 'failed'}`;
        const scheduled = (await attemptsOf(account, appId, endpoint, message)).filter(
          (attempt) => attempt.triggerType === SCHEDULED && timeOf(attempt) <= timeOf(manual),
        );
        const wait = retryWait(ask.retryScheduleMs, scheduled.length);
        if (!wait) return `${outcome}; no scheduled retry was left`;
        const later = await within(wait.waitMs, wait.everyMs, async () =>
          (await attempts()).find((attempt) => attempt.triggerType === SCHEDULED && timeOf(attempt) > timeOf(manual)),
        );
        const due = `the next due ${seconds(wait.dueMs)} after the last`;
        if (later) return `${outcome}; the scheduled retries went on`;
        return wait.settles
          ? `${outcome}; the scheduled retries ended (none within ${seconds(wait.waitMs)}, ${due})`
          : `${outcome}; ${UNSEEN} within ${seconds(wait.waitMs)} whether they go on (${due})`;
      } finally {
        await status(account, 'DELETE', `${app}/endpoint/${endpoint}`).catch(() => undefined);
      }
    },
  );

  // A browser's CORS preflight: whether a page could call Svix's API directly (no key is sent in one).
  await finding(`${CLOUD} a CORS preflight from a browser's origin`, async () => {
    const preflight = await fetch(`${ask.baseUrl}${app}`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://zapier.com',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    await preflight.arrayBuffer();
    const allowed = preflight.headers.get('access-control-allow-origin');
    return `answers ${preflight.status}, ${allowed ? `allows origin ${allowed}` : 'no CORS headers'}`;
  });
};
