import { appNotFound } from './api';
import { EVENT_TYPE_NAME } from './eventType';
import { callProvider, type Caller } from './request';

/**
 * What the connection test checks beyond reading the Consumer App: that the
 * key may do what turning a Zap on and running it will need. Each check is
 * one read that changes nothing; a refusal (401 or 403) names what the key
 * may not do, why a Zap needs it, and what to do, in the guide's words.
 */

/** What to do about a key that may not do what a Zap needs (docs/guide.md, "Choose the key Zapier connects with"). */
const OTHER_KEY =
  "Reconnect with an API Access Key (from the API Access page of Svix's dashboard), or ask whoever set up your Consumer App for an integration key that may do this.";

export const ACCESS_MESSAGES = {
  endpoints: `This key can read your Consumer App, but Svix does not let it read the Consumer App's endpoints, which turning a Zap on needs (the Zap adds its own endpoint, and finds it again if Zapier retries). ${OTHER_KEY}`,
  messages: `This key can read your Consumer App, but Svix does not let it read the Consumer App's messages, which a Zap needs to confirm an auction event after the endpoint's signing secret changes, and to show recent events in Test trigger. ${OTHER_KEY}`,
  eventTypes: `This key can read your Consumer App, but Svix does not let it read event types, which turning a Zap on needs (the Zap checks that ${EVENT_TYPE_NAME} is registered). ${OTHER_KEY}`,
  eventTypeMissing: `The ${EVENT_TYPE_NAME} event type is not registered in your Svix account, and an integration key may not register it, so no Zap could be turned on. Ask whoever set up your Consumer App to register it (with this integration's set-up, or in Svix's dashboard under Event Types), or reconnect with an API Access Key, which registers it when a Zap is turned on.`,
};

type Check = { path: string; params?: Record<string, string | number>; refused: string; action: string };

/** Integration keys (app-scoped, `integsk_`) may read event types but not register them. */
const mayRegisterEventTypes = (apiKey: string): boolean => !apiKey.startsWith('integsk_');

/**
 * Checks, all at once, that the key may list the Consumer App's endpoints and
 * messages, and read the event type (or register it, when it is missing).
 * Throws a plain error naming the first thing it may not do.
 */
export const checkAccess = async (caller: Caller): Promise<void> => {
  const app = `/api/v1/app/${encodeURIComponent(caller.connection.appId)}`;
  const checks: Check[] = [
    {
      path: `${app}/endpoint`,
      params: { limit: 1 },
      refused: ACCESS_MESSAGES.endpoints,
      action: "reading your Consumer App's endpoints",
    },
    {
      path: `${app}/msg`,
      params: { limit: 1, event_types: EVENT_TYPE_NAME },
      refused: ACCESS_MESSAGES.messages,
      action: "reading your Consumer App's messages",
    },
    {
      path: `/api/v1/event-type/${EVENT_TYPE_NAME}`,
      refused: ACCESS_MESSAGES.eventTypes,
      action: `reading the ${EVENT_TYPE_NAME} event type`,
    },
  ];
  const answers = await Promise.all(
    checks.map((check) =>
      callProvider(caller, {
        method: 'GET',
        path: check.path,
        ...(check.params ? { params: check.params } : {}),
        action: check.action,
        notFound: appNotFound(caller.connection),
        accept: check.path.includes('/event-type/') ? [401, 403, 404] : [401, 403],
      }),
    ),
  );
  const refusal = checks.find((_, index) => {
    const status = answers[index]?.status;
    return status === 401 || status === 403;
  });
  if (refusal) throw new caller.z.errors.Error(refusal.refused, 'KeyMayNotDoThis', 403);
  const eventType = answers[checks.length - 1];
  if (eventType?.status === 404 && !mayRegisterEventTypes(caller.connection.apiKey)) {
    throw new caller.z.errors.Error(ACCESS_MESSAGES.eventTypeMissing, 'EventTypeMissing', 400);
  }
};
