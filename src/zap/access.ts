import { appNotFound } from '../svix/api';
import { isRight } from 'fp-ts/Either';
import { EventTypeOut, ListResponseEndpointOut } from '../svix/codecs';
import { EVENT_TYPE_ACTIONS, EVENT_TYPE_NAME } from '../svix/eventType';
import { isIntegrationKey } from '../svix/ids';
import { callSvix, decodeAnswer, type Caller } from '../svix/client';
import { EVENT_TYPE_ARCHIVED } from './endpoint';
import { nodeClock } from '../zapier/clock';
import { sweep } from './life';

/**
 * What the connection test checks beyond reading the Consumer App: that the
 * key may do what turning a Zap on and running it will need. Each check is
 * one read that changes nothing; a refusal (401 or 403) names what the key
 * may not do, why a Zap needs it, and what to do, in the guide's words.
 */

/** What to do about a key that may not do what a Zap needs (docs/svix-setup.md says how each key is made). */
const otherKey = (may: string) =>
  `Reconnect with an API Access Key, or ask whoever set up your Consumer App for an integration key that may ${may}`;

export const ACCESS_MESSAGES = {
  endpoints: `${otherKey("list your Zaps' links")}: turning a Zap on links it to your Consumer App, and Svix does not let this key list those links.`,
  messages: `${otherKey('read messages')}: a Zap reads them to confirm an event its signature alone cannot, and Svix does not let this key.`,
  eventTypes: `${otherKey('read event types')}: turning a Zap on checks that ${EVENT_TYPE_NAME} is registered, and Svix does not let this key.`,
  eventTypeMissing: `Ask whoever set up your Consumer App to register the ${EVENT_TYPE_NAME} event type, or reconnect with an API Access Key: it is not registered, and an integration key may not register it.`,
  /** The same words as turning a Zap on gives, before a Zap is built. */
  eventTypeArchived: EVENT_TYPE_ARCHIVED,
};

/** What each check does, as a phrase in the messages a person reads. */
export const ACCESS_ACTIONS = {
  endpoints: "reading your Zaps' links to Svix",
  messages: "reading your Consumer App's messages",
  eventType: EVENT_TYPE_ACTIONS.read,
};

type Check = { path: string; params?: Record<string, string | number>; refused: string; action: string };

/** Integration keys (app-scoped, `integsk_`) may read event types but not register them. */
const mayRegisterEventTypes = (apiKey: string): boolean => !isIntegrationKey(apiKey);

/**
 * Checks, all at once, that the key may list the Consumer App's endpoints and
 * messages, and read the event type (or register it, when it is missing, and
 * un-archive it, when archived). Throws a plain error naming the first thing
 * it may not do. Then sweeps the Consumer App (zap/life.ts).
 */
export const checkAccess = async (caller: Caller): Promise<void> => {
  const app = `/api/v1/app/${encodeURIComponent(caller.connection.appId)}`;
  const checks: Check[] = [
    {
      // One page, the most Svix lists at once (newest first): enough to see a Zap's endpoint Svix disabled.
      path: `${app}/endpoint`,
      params: { limit: 250 },
      refused: ACCESS_MESSAGES.endpoints,
      action: ACCESS_ACTIONS.endpoints,
    },
    {
      path: `${app}/msg`,
      params: { limit: 1, event_types: EVENT_TYPE_NAME },
      refused: ACCESS_MESSAGES.messages,
      action: ACCESS_ACTIONS.messages,
    },
    {
      path: `/api/v1/event-type/${EVENT_TYPE_NAME}`,
      refused: ACCESS_MESSAGES.eventTypes,
      action: ACCESS_ACTIONS.eventType,
    },
  ];
  const answers = await Promise.all(
    checks.map((check) =>
      callSvix(caller, {
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
  if (refusal) throw new caller.io.errors.Error(refusal.refused, 'KeyMayNotDoThis', 403);
  const eventType = answers[checks.length - 1];
  if (eventType?.status === 404 && !mayRegisterEventTypes(caller.connection.apiKey)) {
    throw new caller.io.errors.Error(ACCESS_MESSAGES.eventTypeMissing, 'EventTypeMissing', 400);
  }
  // Archived: Svix refuses it to every new endpoint. Turning a Zap on un-archives it when the key may.
  if (eventType?.status === 200 && !mayRegisterEventTypes(caller.connection.apiKey)) {
    const read = decodeAnswer(caller, EventTypeOut, eventType.body, ACCESS_ACTIONS.eventType);
    if (read.archived === true)
      throw new caller.io.errors.Error(ACCESS_MESSAGES.eventTypeArchived, 'EventTypeArchived', 400);
  }
  // What no Zap will use again goes. An endpoint Svix disabled is no reason to refuse the connection: its Zap may be
  // off or gone, and a Zap that is on says so at its own Test trigger (zap/endpoint.ts).
  const listed = ListResponseEndpointOut.decode(answers[0]?.body);
  await sweep(caller, nodeClock, isRight(listed) && listed.right.done ? listed.right.data : undefined);
};
