import { inWords, REMEMBER_RUNS_MS, SVIX_CLOCK_ALLOWANCE_MS } from './limits';
import type { Halt } from './delivery/verify';
import type { Failure } from './zapier/io';
import type { Refusal } from './svix/signature';
import { FILTER_LABELS, type FilterField, type Skipped } from './fields/filters';

/**
 * What a person reads in Zapier when a delivery does not run, or a Zap cannot be turned on: each starts with what
 * to do, within the 250 characters Zapier shows (test/messages.test.ts enumerates them all). Svix failures
 * are worded in svix/failures.ts.
 */

/** Why a request to the Zap's address did not run it, when it cannot have come from the Consumer App as sent. */
export type DeliveryRefusal = Refusal | 'no-delivery' | 'no-body' | 'not-a-svix-id' | 'event-too-old';

/** A request anyone could have sent to the Zap's address: nothing to do, unless it was the person's own. */
const notFromSvix = (what: string): string =>
  `Nothing to do unless you sent it: ${what}, so it did not come from your Consumer App and the Zap did not run.`;

/** Runs are remembered REMEMBER_RUNS_MS: an older event could have run already. */
const tooOld = (what: string): string =>
  `Nothing to do: ${what} over ${inWords(REMEMBER_RUNS_MS)} ago, and this Zap remembers the events it ran for ${inWords(REMEMBER_RUNS_MS)} only, so it did not run it again.`;

const REFUSALS: Record<DeliveryRefusal, string> = {
  'no-delivery':
    'Nothing to do: this run carried no delivery from Svix, so there was nothing to check and the Zap did not run. The next auction event runs it as usual.',
  'no-body': notFromSvix("an empty request reached this Zap's address"),
  'missing-headers': notFromSvix("a request to this Zap's address was not signed by Svix"),
  'bad-timestamp': notFromSvix("a request to this Zap's address carried no valid date from Svix"),
  'too-old': tooOld('this delivery was sent'),
  'event-too-old': tooOld('this event happened'),
  'not-a-svix-id': notFromSvix("a delivery's ID is not one Svix makes"),
  'too-new': notFromSvix(`a delivery was dated more than ${inWords(SVIX_CLOCK_ALLOWANCE_MS)} in the future`),
  'no-valid-signature':
    "If this happens to every event, turn the Zap off and on again: this delivery did not carry this Zap's signature from Svix, so the Zap did not run.",
};

export const refusalMessage = (refusal: DeliveryRefusal): string => REFUSALS[refusal];

/**
 * How to run the Zap for an event that did not run: Svix resends a message to one endpoint from its dashboard,
 * which the person building Zaps usually cannot open, so they ask whoever can (docs/svix-setup.md, "Resend an event").
 */
export const resendHint = (messageId: string): string =>
  `Ask whoever set up your Consumer App to resend message ${messageId} to this Zap`;

/** What a person reads of a delivery Svix could not help check in its time: signed with a secret not known here
 * while Svix fails, with one last read over 10 minutes ago (it may have been replaced since), or with an old secret
 * while Svix's record cannot be listed. */
export const couldNotCheck = (messageId: string): Failure => ({
  kind: 'error',
  code: 'SignatureNotChecked',
  status: 503,
  message: `${resendHint(messageId)}: Svix could not confirm in time that this delivery is genuine, so the Zap did not run.`,
});

/** What a person reads when the record settles a delivery against it. */
export const RECORD_REFUSALS = {
  notConfirmed:
    "Nothing to do unless you sent it: this delivery's signature did not match, and Svix's record of your Consumer App has no such event, so the Zap did not run.",
  beforeEndpoint:
    "Nothing to do: this delivery's signature did not match, and its event happened before this Zap was turned on, so the Zap did not run for it.",
  endpointGone:
    'Nothing to do if this Zap is off; if it is on, turn it off and on again: its link to Svix was removed (once the Zap went off, or by hand in Svix), so this delivery did not run.',
  // No ID to resend: the auction service cannot send an event again (#54); Svix dropped it, as its retention says.
  expired:
    "Nothing to do: Svix no longer keeps this event's content, so the Zap could not confirm it and did not run. The auction's next status change runs the Zap as usual.",
};

/** What kept the record from confirming an event, in a few words, from the failure of the call. */
const trouble = (failure: Failure): string =>
  failure.kind === 'throttled'
    ? 'Svix was limiting requests'
    : failure.kind === 'error' && failure.code === 'SvixForbidden'
      ? 'this key may not read messages'
      : failure.kind === 'error' && failure.code === 'SvixUnreachable'
        ? 'Svix could not be reached'
        : 'Svix had trouble answering';

/** What a person reads when the delivery path halts a delivery (src/delivery/verify.ts). */
export const haltMessage = (why: Halt): string => {
  switch (why) {
    case 'expired':
      return RECORD_REFUSALS.expired;
    case 'not-confirmed':
      return RECORD_REFUSALS.notConfirmed;
    case 'before-endpoint':
      return RECORD_REFUSALS.beforeEndpoint;
    case 'gone':
      return RECORD_REFUSALS.endpointGone;
    default:
      return refusalMessage(why);
  }
};

/** A failure to read the record, reworded: which event did not run, and how to send it again. */
export const couldNotConfirm =
  (messageId: string) =>
  (failure: Failure): Failure => {
    const log = failure.log === undefined ? {} : { log: failure.log };
    if (failure.kind === 'auth') {
      const message = `Reconnect your account in Zapier with a current key, then ask whoever set up your Consumer App to resend message ${messageId}: Svix refused the key while confirming the event.`;
      return { kind: 'auth', message, ...log };
    }
    const message = `${resendHint(messageId)}: its signature did not match, and Svix could not confirm it is genuine (${trouble(failure)}), so the Zap did not run.`;
    return { kind: 'error', code: 'EventNotConfirmed', status: 503, message, ...log };
  };

/**
 * A refused read of the endpoint's signing secret, reworded for a delivery: which event did not run, and how to send
 * it again (the failure alone names no event, and the event would be lost in silence).
 */
export const couldNotRead =
  (messageId: string) =>
  (failure: Failure): Failure => {
    const log = failure.log === undefined ? {} : { log: failure.log };
    if (failure.kind === 'auth') {
      const message = `Reconnect your account in Zapier with a current key, then ask whoever set up your Consumer App to resend message ${messageId}: Svix refused the connection's key while checking this delivery.`;
      return { kind: 'auth', message, ...log };
    }
    const why = failure.kind === 'error' && failure.code === 'SvixForbidden' ? 'the key may not' : trouble(failure);
    const message = `${resendHint(messageId)}: Svix would not say how it signs this Zap's deliveries (${why}), so the Zap did not run.`;
    return { kind: 'error', code: 'SignatureNotChecked', status: 503, message, ...log };
  };

/**
 * What the Zap's history says of an event its options skipped, when asked to show them (#54): the option, and the
 * event's status by its real name, so that a builder learns the names the auction service uses (it publishes no
 * list). A status is a verified event's, and named only when it looks like one (letters, digits, spaces, `_` or
 * `-`, up to 40): anything else is not repeated.
 */
export const skippedMessage = (by: Skipped, status: string): string => {
  const named = /^[\p{L}\p{N} _-]{1,40}$/u.test(status) ? ` (status ${status})` : '';
  return `Nothing to do unless you want such events: the option "${FILTER_LABELS[by]}" skipped this one${named}, so the Zap did not run. You asked to see skipped events ("${FILTER_LABELS.showSkipped}").`;
};

/** What a person reads in Zapier when turning the Zap on or a delivery cannot go ahead (a delivery's halts and errors are worded above). */
export const MESSAGES = {
  missingTargetUrl: 'Turn the Zap on again: Zapier gave no address to send auction events to.',
  missingSubscription:
    'Turn the Zap off and on again: its link to Svix is incomplete, so deliveries cannot be checked.',
};

/** What a person reads when an input field cannot be read: which one, and what to do in Zapier. */
export const unreadableFilter = (key: FilterField): string =>
  `Open the Zap, set "${FILTER_LABELS[key]}" again in its trigger step, and publish it: the field could not be read, so the Zap did not run for this event (it never runs for every event instead).`;
