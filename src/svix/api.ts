import { randomBytes } from 'node:crypto';
import type { Connection } from './connection';
import {
  ApplicationOut,
  EndpointOut,
  EndpointSecretOut,
  ListResponseEndpointOut,
  ListResponseMessageOut,
  MessageOut,
} from './codecs';
import { EVENT_TYPE_NAME, type SvixTransport } from './eventType';
import { isEndpointId, isIntegrationKey, isPathSafeUid } from './ids';
import { callSvix, decodeAnswer, tryCall, tryDecode, type Caller, type SvixRequest, type Tried } from './client';

/**
 * Svix operations this integration uses, one function each. Every id
 * that goes into a path has been checked against Svix's id pattern.
 */

/** What each call does, as a phrase in the messages a person reads ("Svix refused the key while …"). */
export const ACTIONS = {
  readApp: 'reading your Consumer App',
  createEndpoint: 'linking this Zap to Svix',
  readEndpoint: "reading this Zap's link to Svix",
  paceEndpoint: 'sharing the pace of deliveries among your Zaps',
  listEndpoints: "reading your Zaps' links to Svix",
  pointEndpoint: 'turning this Zap on in Svix',
  parkEndpoint: 'turning this Zap off in Svix',
  readSecret: "reading how Svix signs this Zap's deliveries",
  deleteEndpoint: "removing this Zap's link to Svix",
  recentEvents: 'reading recent auction events',
  confirmMessage: 'confirming the event with Svix',
};

const appPath = (connection: Connection): string => `/api/v1/app/${encodeURIComponent(connection.appId)}`;

/** What a person reads in Zapier when this Zap's endpoint cannot be used. */
export const ENDPOINT_MESSAGES = {
  damaged: "Turn the Zap off and on again to link it to Svix anew: this Zap's link to Svix is damaged.",
  gone: "Turn the Zap off and on again to link it to Svix anew: this Zap's link no longer exists in Svix (someone may have deleted it there).",
};

const checkEndpointId = (caller: Caller, endpointId: string): string => {
  if (!isEndpointId(endpointId) && !isPathSafeUid(endpointId)) {
    throw new caller.io.errors.Error(ENDPOINT_MESSAGES.damaged, 'InvalidEndpointId', 400);
  }
  return encodeURIComponent(endpointId);
};

/** A 404 for the Consumer App: the ID, the key's account or its region do not match. */
export const appNotFound = (connection: Connection): string =>
  isIntegrationKey(connection.apiKey)
    ? `Check that the Consumer App ID is the one given to you with the integration key (it works only in that app): Svix has no Consumer App ${connection.appId} for this key.`
    : `Check that the Consumer App ID and the key come from the same Svix account, environment (Production or Development) and region (an EU key ends in .eu): Svix has no Consumer App ${connection.appId} for this key.`;

/** Svix calls of the shared operations (the event type), made through this caller. */
export const transportOf = (caller: Caller): SvixTransport => ({
  call: (call) => callSvix(caller, call),
  decode: (codec, body, action) => decodeAnswer(caller, codec, body, action),
});

export const getApplication = async (caller: Caller): Promise<ApplicationOut> => {
  const action = ACTIONS.readApp;
  const answer = await callSvix(caller, {
    method: 'GET',
    path: appPath(caller.connection),
    action,
    notFound: appNotFound(caller.connection),
  });
  return decodeAnswer(caller, ApplicationOut, answer.body, action);
};

/** A signing secret in Svix's format, made here so it need not be read back after the endpoint is made. */
export const newEndpointSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export interface NewEndpoint {
  url: string;
  uid: string;
  description: string;
  secret: string;
  /** Which Zap it serves, its generation and since when the Zap runs events (zap/policy.ts), so that a listing says. */
  metadata: Record<string, string>;
  /** Messages a second Svix sends it at most. */
  throttleRate?: number;
}

export type EndpointCreation =
  | { kind: 'created'; endpoint: EndpointOut }
  /** Svix refused it (400, 403 or 422): the event type is not registered or is archived, a field is refused… */
  | { kind: 'refused'; status: number; body: unknown };

export const CREATE_ENDPOINT = ACTIONS.createEndpoint;

/** Creates the endpoint that delivers AUCTION_STATUS_CHANGE to the Zap, with its signing secret. */
export const createEndpoint = async (caller: Caller, endpoint: NewEndpoint): Promise<EndpointCreation> => {
  const answer = await callSvix(caller, {
    method: 'POST',
    path: `${appPath(caller.connection)}/endpoint`,
    body: {
      url: endpoint.url,
      uid: endpoint.uid,
      description: endpoint.description,
      eventTypes: [EVENT_TYPE_NAME],
      secret: endpoint.secret,
      metadata: endpoint.metadata,
      ...(endpoint.throttleRate === undefined ? {} : { throttleRate: endpoint.throttleRate }),
    },
    action: CREATE_ENDPOINT,
    accept: [400, 403, 409, 422],
    notFound: appNotFound(caller.connection),
  });
  if (answer.status >= 400) return { kind: 'refused', status: answer.status, body: answer.body };
  return { kind: 'created', endpoint: decodeAnswer(caller, EndpointOut, answer.body, CREATE_ENDPOINT) };
};

/** The endpoint, or undefined when Svix has none by this id or uid. */
export const findEndpoint = async (caller: Caller, idOrUid: string): Promise<EndpointOut | undefined> => {
  const action = ACTIONS.readEndpoint;
  const answer = await callSvix(caller, {
    method: 'GET',
    path: `${appPath(caller.connection)}/endpoint/${checkEndpointId(caller, idOrUid)}`,
    action,
    accept: [404],
  });
  return answer.status === 404 ? undefined : decodeAnswer(caller, EndpointOut, answer.body, action);
};

/** What a PATCH of a Zap's endpoint changes: where it points, whether Svix sends to it, what it says and keeps. */
export type EndpointChange = {
  url?: string;
  disabled?: boolean;
  description?: string;
  metadata?: Record<string, string>;
  throttleRate?: number;
};

/**
 * Changes an endpoint (only the fields given): what Svix answered (404 when the endpoint is gone, 422 refused) and,
 * when it changed it, when (`updatedAt`, on Svix's clock).
 */
export const changeEndpoint = async (
  caller: Caller,
  endpointId: string,
  change: EndpointChange,
  action: string,
): Promise<{ status: number; at?: number }> => {
  const answer = await callSvix(caller, {
    method: 'PATCH',
    path: `${appPath(caller.connection)}/endpoint/${checkEndpointId(caller, endpointId)}`,
    body: change,
    action,
    accept: [404, 422],
  });
  if (answer.status >= 300) return { status: answer.status };
  const at = Date.parse(decodeAnswer(caller, EndpointOut, answer.body, action).updatedAt ?? '');
  return Number.isFinite(at) ? { status: answer.status, at } : { status: answer.status };
};

/** Paces an endpoint at `rate` messages a second: what Svix answered, 404 when the endpoint is gone. */
export const paceEndpoint = async (caller: Caller, endpointId: string, rate: number): Promise<number> =>
  (await changeEndpoint(caller, endpointId, { throttleRate: rate }, ACTIONS.paceEndpoint)).status;

/** Every endpoint of the Consumer App, a page of 250 at a time (at most 20 pages). */
export const listEndpoints = async (caller: Caller): Promise<EndpointOut[]> => {
  const action = ACTIONS.listEndpoints;
  const endpoints: EndpointOut[] = [];
  let iterator: string | undefined;
  for (let page = 0; page < 20; page += 1) {
    const answer = await callSvix(caller, {
      method: 'GET',
      path: `${appPath(caller.connection)}/endpoint`,
      params: { limit: 250, ...(iterator === undefined ? {} : { iterator }) },
      action,
      notFound: appNotFound(caller.connection),
    });
    const listed = decodeAnswer(caller, ListResponseEndpointOut, answer.body, action);
    endpoints.push(...listed.data);
    if (listed.done || !listed.iterator) break;
    iterator = listed.iterator;
  }
  return endpoints;
};

export const getEndpointSecret = async (
  caller: Caller,
  endpointId: string,
  options: Pick<SvixRequest, 'timeoutMs' | 'reword'> = {},
): Promise<string> => {
  const action = ACTIONS.readSecret;
  const answer = await callSvix(caller, {
    method: 'GET',
    path: `${appPath(caller.connection)}/endpoint/${checkEndpointId(caller, endpointId)}/secret`,
    action,
    notFound: ENDPOINT_MESSAGES.gone,
    secretAnswer: true,
    ...options,
  });
  return decodeAnswer(caller, EndpointSecretOut, answer.body, action).key;
};

/** Deletes an endpoint; one that is already gone counts as deleted. */
export const deleteEndpoint = async (caller: Caller, endpointId: string): Promise<'deleted' | 'already-gone'> => {
  const answer = await callSvix(caller, {
    method: 'DELETE',
    path: `${appPath(caller.connection)}/endpoint/${checkEndpointId(caller, endpointId)}`,
    action: ACTIONS.deleteEndpoint,
    accept: [404],
  });
  return answer.status === 404 ? 'already-gone' : 'deleted';
};

/** The Consumer App's most recent AUCTION_STATUS_CHANGE messages, newest first. */
export const listRecentMessages = async (caller: Caller, limit: number): Promise<MessageOut[]> => {
  const action = ACTIONS.recentEvents;
  const answer = await callSvix(caller, {
    method: 'GET',
    path: `${appPath(caller.connection)}/msg`,
    params: { event_types: EVENT_TYPE_NAME, limit, with_content: true },
    action,
    notFound: appNotFound(caller.connection),
  });
  return decodeAnswer(caller, ListResponseMessageOut, answer.body, action).data;
};

/** For a delivery: the endpoint's current signing secret, or 'gone' where Svix no longer has the endpoint. */
export const tryReadSecret = async (
  caller: Caller,
  endpointId: string,
  timeoutMs: number,
): Promise<Tried<string | 'gone'>> => {
  const action = ACTIONS.readSecret;
  const path = `${appPath(caller.connection)}/endpoint/${checkEndpointId(caller, endpointId)}/secret`;
  const tried = await tryCall(caller, { method: 'GET', path, action, accept: [404], secretAnswer: true, timeoutMs });
  if (!tried.ok) return tried;
  if (tried.answer.status === 404) return { ok: true, answer: 'gone' };
  const secret = tryDecode(caller, EndpointSecretOut, tried.answer.body, action);
  return secret.ok ? { ok: true, answer: secret.answer.key } : secret;
};

/** For a delivery: the message Svix keeps under this id, with its payload, or 'none' where it keeps none. */
export const tryReadMessage = async (
  caller: Caller,
  messageId: string,
  timeoutMs: number,
): Promise<Tried<MessageOut | 'none'>> => {
  const action = ACTIONS.confirmMessage;
  const path = `${appPath(caller.connection)}/msg/${encodeURIComponent(messageId)}`;
  const params = { with_content: true };
  const tried = await tryCall(caller, { method: 'GET', path, params, action, accept: [404], timeoutMs });
  if (!tried.ok) return tried;
  if (tried.answer.status === 404) return { ok: true, answer: 'none' };
  return tryDecode(caller, MessageOut, tried.answer.body, action);
};
