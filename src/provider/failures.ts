import { isRight } from 'fp-ts/Either';
import { HTTPValidationError, HttpErrorOut } from './codecs';

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

export interface FailureContext {
  /** What the integration was doing, as a phrase: "reading your Consumer App". */
  action: string;
  /** A sentence for a 404 that is more helpful than the generic one. */
  notFound?: string;
  /** A sentence for a 409 that is more helpful than the generic one. */
  conflict?: string;
  /** A sentence for a 403 that is more helpful than the generic one. */
  forbidden?: string;
  /** A sentence for a 422 that is more helpful than the generic one. */
  invalid?: string;
}

const withCode = (status: number, body: unknown): string => {
  const code = safeCode(body);
  return code ? `${status}, ${code}` : String(status);
};

export const describeStatus = (
  status: number,
  body: unknown,
  context: FailureContext,
  retryAfter?: string | null,
): Failure => {
  const { action } = context;
  if (status === 401) {
    return {
      kind: 'auth',
      message:
        `The provider did not accept the API Access Key while ${action} (401). ` +
        'Reconnect with a valid API Access Key: create one under API Access in your provider account (it is shown only once, so copy it then).',
    };
  }
  if (status === 429) {
    const delaySeconds = retryAfterSeconds(retryAfter);
    const when = delaySeconds === undefined ? 'shortly' : `in about ${delaySeconds} seconds`;
    return {
      kind: 'throttled',
      message: `The provider is limiting how many requests this account can make (429) while ${action}. Zapier will try again ${when}; nothing needs to change.`,
      ...(delaySeconds === undefined ? {} : { delaySeconds }),
    };
  }
  const error = (code: string, message: string): Failure => ({ kind: 'error', code, status, message });
  switch (status) {
    case 400:
      return error(
        'ProviderBadRequest',
        `The provider refused the request made while ${action} (${withCode(status, body)}). Check the connection's Consumer App ID and Server URL; if they are right and this keeps happening, contact this integration's support.`,
      );
    case 403:
      return error(
        'ProviderForbidden',
        context.forbidden ??
          `The API Access Key is not allowed to do this (${action}, ${withCode(status, body)}). Reconnect with a key from the provider account that owns this Consumer App.`,
      );
    case 404:
      return error(
        'ProviderNotFound',
        context.notFound ??
          `The provider found nothing while ${action} (404). Check the Consumer App ID and that the API Access Key is from the same account and region.`,
      );
    case 409:
      return error(
        'ProviderConflict',
        context.conflict ??
          `The provider reported a conflict while ${action} (${withCode(status, body)}): it already exists. Try again; if it keeps happening, turn the Zap off and on again.`,
      );
    case 413:
      return error('ProviderTooLarge', `The request made while ${action} was too large for the provider (413).`);
    case 422: {
      const fields = invalidFields(body);
      const which = fields.length > 0 ? `: check ${fields.join(', ')}` : '';
      return error(
        'ProviderInvalidData',
        context.invalid ??
          `The provider could not accept the data sent while ${action} (422)${which}. If the connection's fields look right, contact this integration's support.`,
      );
    }
    default:
      if (status >= 500) {
        return error(
          'ProviderUnavailable',
          `The provider had a temporary problem while ${action} (${status}). Nothing is wrong with your set-up: try again in a few minutes.`,
        );
      }
      return error(
        'ProviderUnexpectedStatus',
        `The provider answered with an unexpected status (${status}) while ${action}. Try again; if it keeps happening, check the Server URL field.`,
      );
  }
};

/**
 * What an answer from the provider means: its parsed JSON body when the
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
      body = JSON.parse(text);
    } catch {
      parsed = false;
    }
  }
  const accepted = (status >= 200 && status < 300) || (call.accept ?? []).includes(status);
  if (!accepted) return { ok: false, failure: describeStatus(status, body, call, retryAfter) };
  if (!parsed) return { ok: false, failure: describeNotJson(call.action) };
  return { ok: true, body };
};

export const describeNotJson = (action: string): Failure => ({
  kind: 'error',
  code: 'ProviderNotJson',
  status: 502,
  message: `The answer received while ${action} was not the provider's usual JSON, so the Server URL may not point at the provider's API. Leave the Server URL empty to use the default, or correct it, then reconnect.`,
});

export const describeUnexpectedShape = (action: string, problems: readonly string[]): Failure => ({
  kind: 'error',
  code: 'ProviderUnexpectedAnswer',
  status: 502,
  message: `The provider's answer while ${action} was not in the expected form (${problems.slice(0, 3).join('; ')}). Check the Server URL field; if it is right, contact this integration's support.`,
});

/** Network-level failures: refused connections, DNS, time-outs. Names the host, never the key. */
export const describeUnreachable = (action: string, origin: string, cause: unknown): Failure => {
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
  return {
    kind: 'error',
    code: 'ProviderUnreachable',
    status: 503,
    message: `Could not reach the provider at ${origin} while ${action}: ${reason}. Check the Server URL field (leave it empty for the default) and try again in a few minutes.`,
  };
};
