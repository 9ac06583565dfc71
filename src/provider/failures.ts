import { isRight } from 'fp-ts/Either';
import { HTTPValidationError, HttpErrorOut } from './codecs';
import { parseJson } from './json';

/**
 * Plain-English descriptions of what went wrong talking to the provider. Pure:
 * the request layer turns these into the platform's error classes. Messages
 * name the action and the fields involved, never a key, secret or payload value.
 */
export type Failure =
  | { kind: 'auth'; message: string }
  | { kind: 'throttled'; message: string; delaySeconds?: number }
  | { kind: 'error'; code: string; status: number; message: string };

/** A provider error code such as `not_found` is a slug; anything else is not repeated. */
const safeCode = (body: unknown): string | undefined => {
  const decoded = HttpErrorOut.decode(body);
  if (!isRight(decoded)) return undefined;
  return /^[a-z0-9_.-]{1,64}$/i.test(decoded.right.code) ? decoded.right.code : undefined;
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
  /** In a Zap run's history: a delivery's perform. Zapier has already answered the provider, so nothing resends it. */
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

/** The phrases that differ by reader. */
/** What a person reads the same in the Zap editor and in a run's history. */
const IN_ZAPIER = {
  serverUrl: "check the connection's Server URL field in Zapier (leave it empty for Svix's default)",
  otherKey: 'Reconnect the account in Zapier with',
  connection: "the connection's Consumer App ID",
  escalate: 'show this message to whoever set up your Consumer App in Svix',
};

const PHRASES: Record<
  Reader,
  {
    /** What to do about a passing problem: undefined where the person can do nothing about this one. */
    tryLater: string | undefined;
    /** What became of the work. */
    outcome: string;
    /** How to correct the address of the provider's API. */
    serverUrl: string;
    /** How to use another key. */
    otherKey: string;
    /** Where the Consumer App is named. */
    connection: string;
    /** Who can act on a failure that is not the person's to fix (the integration or its set-up may be at fault). */
    escalate: string;
  }
> = {
  'zap-editor': { ...IN_ZAPIER, tryLater: 'try again in a few minutes', outcome: '' },
  'zap-run': { ...IN_ZAPIER, tryLater: undefined, outcome: ' The Zap did not run for this event.' },
  setup: {
    tryLater: 'run the set-up again in a few minutes',
    outcome: '',
    serverUrl: "check the --server-url option (leave it out for Svix's default)",
    otherKey: 'Run the set-up again with',
    connection: 'the Consumer App',
    escalate: 'keep this message for whoever maintains this integration',
  },
};

const withCode = (status: number, body: unknown): string => {
  const code = safeCode(body);
  return code ? `${status}, ${code}` : String(status);
};

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** What a person does about a key Svix refused (401). */
const rejectedKey = (action: string, reader: Reader): string =>
  reader === 'setup'
    ? `Svix did not accept the API Access Key while ${action} (401). Check that you copied the whole key, or create a new one on the API Access page of Svix's dashboard, then run the set-up again.`
    : `Svix did not accept this connection's key while ${action} (401): it may have been mistyped, replaced or deleted. Reconnect the account in Zapier with a current key: an integration key from whoever set up your Consumer App, or an API Access Key from the API Access page of Svix's dashboard.`;

/** What a person does about Svix's rate limit (429). */
const throttled = (action: string, reader: Reader, delaySeconds: number | undefined): string => {
  const wait = delaySeconds === undefined ? 'a minute' : `about ${delaySeconds} seconds`;
  const head = `Svix is limiting how many requests this account can make (429) while ${action}.`;
  if (reader === 'zap-run')
    return `${head} This run could not finish. If this keeps happening, ask Svix about your account's rate limit.`;
  return `${head} Wait ${wait}, then ${reader === 'setup' ? 'run the set-up again' : 'try again'}.`;
};

export const describeStatus = (
  status: number,
  body: unknown,
  context: FailureContext,
  retryAfter?: string | null,
): Failure => {
  const { action, reader } = context;
  const say = PHRASES[reader];
  if (status === 401) return { kind: 'auth', message: rejectedKey(action, reader) };
  if (status === 429) {
    const delaySeconds = retryAfterSeconds(retryAfter);
    return {
      kind: 'throttled',
      message: throttled(action, reader, delaySeconds),
      ...(delaySeconds === undefined ? {} : { delaySeconds }),
    };
  }
  const error = (code: string, message: string): Failure => ({ kind: 'error', code, status, message });
  switch (status) {
    case 400:
      return error(
        'ProviderBadRequest',
        `Svix refused the request made while ${action} (${withCode(status, body)}). Check ${say.connection}, and ${say.serverUrl}; if they are right and this keeps happening, ${say.escalate}.`,
      );
    case 403:
      return error(
        'ProviderForbidden',
        context.forbidden ??
          `The key is not allowed to do this (${action}, ${withCode(status, body)}). ${say.otherKey} a key of the Svix account that owns this Consumer App.`,
      );
    case 404:
      return error(
        'ProviderNotFound',
        context.notFound ??
          `Svix found nothing while ${action} (404). Check ${say.connection}, and that the key comes from the same Svix account, environment and region.`,
      );
    case 409:
      return error(
        'ProviderConflict',
        context.conflict ??
          `Svix reported a conflict while ${action} (${withCode(status, body)}): it already exists.${say.outcome} ${
            say.tryLater ? `${capitalised(say.tryLater)}; if` : 'If'
          } it keeps happening, ${say.escalate}.`,
      );
    case 413:
      return error(
        'ProviderTooLarge',
        `The request made while ${action} was too large for Svix (413). ${capitalised(say.escalate)}.`,
      );
    case 422: {
      const fields = invalidFields(body);
      const which = fields.length > 0 ? `: check ${fields.join(', ')}` : '';
      return error(
        'ProviderInvalidData',
        context.invalid ??
          `Svix could not accept the data sent while ${action} (422)${which}. If ${reader === 'setup' ? 'the options' : "the connection's fields"} look right, ${say.escalate}.`,
      );
    }
    default:
      if (status >= 500) {
        const next = say.tryLater
          ? ` Nothing is wrong on your side: ${say.tryLater}.`
          : " If this keeps happening, check Svix's status page.";
        return error(
          'ProviderUnavailable',
          `Svix had a temporary problem while ${action} (${status}).${say.outcome}${next}`,
        );
      }
      return error(
        'ProviderUnexpectedStatus',
        `Svix answered with an unexpected status (${status}) while ${action}. ${capitalised(say.serverUrl)}.`,
      );
  }
};

/**
 * What an answer from the provider means: its parsed JSON body (every digit
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
  code: 'ProviderNotJson',
  status: 502,
  message: `The answer received while ${action} was not Svix's usual JSON, so the address used may not be Svix's API: ${PHRASES[reader].serverUrl}.`,
});

export const describeUnexpectedShape = (action: string, problems: readonly string[], reader: Reader): Failure => ({
  kind: 'error',
  code: 'ProviderUnexpectedAnswer',
  status: 502,
  message: `Svix's answer while ${action} was not in the expected form (${problems.slice(0, 3).join('; ')}). ${capitalised(PHRASES[reader].serverUrl)}; if it is right, ${PHRASES[reader].escalate}.`,
});

/** Network-level failures: refused connections, DNS, time-outs. Names the host, never the key. */
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
    code: 'ProviderUnreachable',
    status: 503,
    message: `Could not reach Svix at ${origin} while ${action}: ${reason}.${say.outcome} ${
      say.tryLater ? `${capitalised(say.tryLater)}; if` : 'If'
    } this keeps happening, ${say.serverUrl}.`,
  };
};
