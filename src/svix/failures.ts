import { isRight } from 'fp-ts/Either';
import { HTTPValidationError, HttpErrorOut } from './codecs';
import { parseJson } from '../models/json';
import type { Failure } from '../zapier/io';

/**
 * Plain-English descriptions of what went wrong talking to Svix. Pure:
 * the request layer turns these into the platform's error classes. A message
 * a person reads starts with what to do (Zapier shows at most 250 characters
 * of it), then what happened; it names the action and the fields involved,
 * never a key, a secret, a payload value, an HTTP status or a header: those
 * go to the log (`log`), for whoever supports the Zap.
 */

/** A Svix error code such as `not_found` (or `insufficient access`, with a space, as Svix writes it); anything else is not repeated. */
const safeCode = (body: unknown): string | undefined => {
  const decoded = HttpErrorOut.decode(body);
  if (!isRight(decoded)) return undefined;
  return /^[a-z0-9_. -]{1,64}$/i.test(decoded.right.code) ? decoded.right.code : undefined;
};

/** Field locations from a 422 body (`["body", "url"]` → `url`): names only, never values. */
export const invalidFields = (body: unknown): string[] => {
  const decoded = HTTPValidationError.decode(body);
  if (!isRight(decoded)) return [];
  const fields = decoded.right.detail
    .map((item) =>
      item.loc
        .filter((part, i) => !(i === 0 && (part === 'body' || part === 'query' || part === 'path')))
        .map(String)
        .filter((part) => /^[A-Za-z0-9_.-]{1,64}$/.test(part))
        .join('.'),
    )
    .filter((field) => field !== '');
  return [...new Set(fields)];
};

/** Retry-After in whole seconds, from either form the HTTP standard allows. */
export const retryAfterSeconds = (header: string | null | undefined, now = Date.now()): number | undefined => {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const when = Date.parse(trimmed);
  if (Number.isNaN(when)) return undefined;
  return Math.max(0, Math.ceil((when - now) / 1000));
};

/**
 * Where a person reads a message, which decides what it can ask them to do:
 * in Zapier there is no terminal, and at the terminal there is no Zapier.
 */
export type Reader =
  /** In the Zap editor: connecting an account, turning a Zap on or off, testing the trigger, a dropdown. */
  | 'zap-editor'
  /** In a Zap run's history: a delivery's perform. Zapier has already answered Svix, so nothing resends it. */
  | 'zap-run'
  /** At the terminal, from `npm run setup` (or the sandbox). */
  | 'setup';

export const READERS: readonly Reader[] = ['zap-editor', 'zap-run', 'setup'];

export interface FailureContext {
  /** What the integration was doing, as a phrase: "reading your Consumer App". */
  action: string;
  /** Who reads the message, and where. */
  reader: Reader;
  /** A sentence for a 404 that is more helpful than the generic one. */
  notFound?: string;
  /** A sentence for a 409 that is more helpful than the generic one. */
  conflict?: string;
  /** A sentence for a 403 that is more helpful than the generic one. */
  forbidden?: string;
  /** A sentence for a 422 that is more helpful than the generic one. */
  invalid?: string;
}

/** What a person reads the same in the Zap editor and in a run's history. */
const IN_ZAPIER = {
  serverUrl: "check the connection's Server URL (empty for Svix's default)",
  both: "the connection's Consumer App ID and Server URL (empty for Svix's default)",
  connection: "the connection's Consumer App ID",
  escalate: 'show this to whoever set up your Consumer App in Svix',
  wrongKey: 'Reconnect your account in Zapier with a key of the Svix account that owns this Consumer App',
};

/** The phrases that differ by reader. */
const PHRASES: Record<
  Reader,
  typeof IN_ZAPIER & {
    /** What to do about a passing problem: undefined where the person can do nothing about this one. */
    tryLater: string | undefined;
    /** What became of the work, after what happened. */
    outcome: string;
  }
> = {
  'zap-editor': { ...IN_ZAPIER, tryLater: 'try again in a few minutes', outcome: '' },
  'zap-run': { ...IN_ZAPIER, tryLater: undefined, outcome: ', so the Zap did not run' },
  setup: {
    tryLater: 'run the set-up again in a few minutes',
    outcome: '',
    serverUrl: "check the --server-url option (leave it out for Svix's default)",
    connection: 'the Consumer App',
    both: "the Consumer App and the --server-url option (leave it out for Svix's default)",
    escalate: 'keep this message for whoever maintains this integration',
    // An integration key is refused before any call (setup/cli.ts): a key refused here is of the wrong environment.
    wrongKey:
      'Run the set-up again with an API Access Key from the API Access page of the environment that holds the Consumer App',
  },
};

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

const seconds = (count: number): string => (count === 1 ? 'a second' : `about ${count} seconds`);

/** What a person does about a key Svix refused. */
const rejectedKey = (action: string, reader: Reader): string =>
  reader === 'setup'
    ? `Check that you copied the whole key, or create a new one on the API Access page of Svix's dashboard, then run the set-up again: Svix refused the key while ${action}.`
    : `Reconnect your account in Zapier with a current key: Svix refused this connection's key while ${action} (it may be mistyped, replaced or deleted).`;

/** What a person does about Svix's rate limit. */
const throttled = (action: string, reader: Reader, delaySeconds: number | undefined): string => {
  const wait = delaySeconds === undefined ? 'a minute' : seconds(Math.max(1, delaySeconds));
  if (reader === 'zap-run')
    return `If this keeps happening, ask whoever set up your Consumer App to raise Svix's rate limit: Svix limited requests while ${action}, so the Zap did not run.`;
  const again = reader === 'setup' ? 'Run the set-up again' : 'Try again';
  return `${again} in ${wait}: Svix is limiting how many requests this account makes.`;
};

/** The first step for trouble that may pass, then what happened; or, in a run, what happened and its outcome. */
const passing = (say: (typeof PHRASES)[Reader], then: string, happened: string): string =>
  say.tryLater
    ? `${capitalised(say.tryLater)}; if it keeps happening, ${then}. ${capitalised(happened)}.`
    : `If this keeps happening, ${then}: ${happened}${say.outcome}.`;

export const describeStatus = (
  status: number,
  body: unknown,
  context: FailureContext,
  retryAfter?: string | null,
): Failure => {
  const { action, reader } = context;
  const say = PHRASES[reader];
  const code = safeCode(body);
  // The fields Svix names in a 422 are the request's, which the person never typed: they are for the log.
  const fields = status === 422 ? invalidFields(body).slice(0, 3) : [];
  const log = `Svix answered ${status}${code ? ` (${code})` : ''}${retryAfter ? ` with Retry-After ${retryAfter}` : ''} while ${action}${fields.length > 0 ? ` (fields: ${fields.join(', ')})` : ''}.`;
  if (status === 401) return { kind: 'auth', message: rejectedKey(action, reader), log };
  if (status === 429) {
    const delaySeconds = retryAfterSeconds(retryAfter);
    return {
      kind: 'throttled',
      message: throttled(action, reader, delaySeconds),
      ...(delaySeconds === undefined ? {} : { delaySeconds }),
      log,
    };
  }
  const error = (errorCode: string, message: string): Failure => ({
    kind: 'error',
    code: errorCode,
    status,
    message,
    log,
  });
  switch (status) {
    case 400:
      return error('SvixBadRequest', `Check ${say.both}; if right, ${say.escalate}. Svix refused it while ${action}.`);
    case 403:
      return error(
        'SvixForbidden',
        context.forbidden ?? `${say.wrongKey}: Svix did not let this key do it (${action}).`,
      );
    case 404:
      return error(
        'SvixNotFound',
        context.notFound ??
          `Check ${say.connection}, and that it and the key come from the same Svix account, environment and region: Svix found nothing while ${action}.`,
      );
    case 409:
      return error(
        'SvixConflict',
        context.conflict ?? passing(say, say.escalate, `Svix reported a conflict while ${action}`),
      );
    case 413:
      return error(
        'SvixTooLarge',
        `${capitalised(say.escalate)}: the request made while ${action} was too large for Svix.`,
      );
    case 422:
      return error(
        'SvixInvalidData',
        context.invalid ?? `${capitalised(say.escalate)}: Svix did not accept what was sent while ${action}.`,
      );
    default:
      if (status >= 500) {
        return error(
          'SvixUnavailable',
          say.tryLater
            ? `${capitalised(say.tryLater)}: Svix had a temporary problem while ${action}. Nothing is wrong on your side.`
            : `If this keeps happening, check Svix's status page, status.svix.com: Svix had a temporary problem while ${action}${say.outcome}.`,
        );
      }
      return error(
        'SvixUnexpectedStatus',
        `${capitalised(say.serverUrl)}: Svix answered in an unexpected way while ${action}.`,
      );
  }
};

/**
 * What an answer from Svix means: its parsed JSON body (every digit
 * kept: message payloads reach Zaps, see parseJson) when the
 * status is a success or one the caller handles itself, otherwise the failure
 * to report. Shared by the app's z.request calls and the set-up's fetch calls.
 */
export const judgeAnswer = (
  status: number,
  text: string,
  call: FailureContext & { accept?: readonly number[] },
  retryAfter: string | null | undefined,
): { ok: true; body: unknown } | { ok: false; failure: Failure } => {
  let body: unknown;
  let parsed = true;
  if (text.trim() !== '') {
    try {
      body = parseJson(text);
    } catch {
      parsed = false;
    }
  }
  const accepted = (status >= 200 && status < 300) || (call.accept ?? []).includes(status);
  if (!accepted) return { ok: false, failure: describeStatus(status, body, call, retryAfter) };
  if (!parsed) return { ok: false, failure: describeNotJson(call.action, call.reader) };
  return { ok: true, body };
};

export const describeNotJson = (action: string, reader: Reader): Failure => ({
  kind: 'error',
  code: 'SvixNotJson',
  status: 502,
  message: `${capitalised(PHRASES[reader].serverUrl)}: the answer received while ${action} was not from Svix's API.`,
  log: `The answer received while ${action} was not JSON.`,
});

export const describeUnexpectedShape = (action: string, problems: readonly string[], reader: Reader): Failure => ({
  kind: 'error',
  code: 'SvixUnexpectedAnswer',
  status: 502,
  message: `${capitalised(PHRASES[reader].serverUrl)}; if it is right, ${PHRASES[reader].escalate}. Svix's answer while ${action} could not be read.`,
  log: `Svix's answer while ${action} was not in the expected form: ${problems.slice(0, 5).join('; ')}.`,
});

/** Network-level failures: refused connections, DNS, time-outs. The host goes to the log, never the key. */
export const describeUnreachable = (action: string, origin: string, cause: unknown, reader: Reader): Failure => {
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const type = typeof cause === 'object' && cause !== null && 'type' in cause ? String(cause.type) : '';
  const reason =
    type === 'request-timeout' || /TIMEDOUT/.test(code)
      ? 'it did not answer in time'
      : code === 'ECONNREFUSED'
        ? 'the connection was refused'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'the address could not be found'
          : 'the connection failed';
  const say = PHRASES[reader];
  return {
    kind: 'error',
    code: 'SvixUnreachable',
    status: 503,
    message: passing(say, say.serverUrl, `Svix could not be reached while ${action} (${reason})`),
    log: `Could not reach ${origin} while ${action}: ${code || type || 'no answer'}.`,
  };
};
