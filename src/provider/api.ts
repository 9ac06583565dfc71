import type { ZObject } from 'zapier-platform-core';
import type { Connection } from './connection';
import {
  ApplicationOut,
  EndpointOut,
  EndpointSecretOut,
  EventTypeOut,
  ListResponseMessageOut,
  type MessageOut,
} from './codecs';
import { auctionStatusChangeEventType, EVENT_TYPE_NAME } from './eventType';
import { isEndpointId, isPathSafeUid } from './ids';
import { callProvider, decodeAnswer } from './request';

/**
 * The provider operations this integration uses, one function each. Every id
 * that goes into a path has been checked against the provider's id pattern.
 */

const appPath = (connection: Connection): string => `/api/v1/app/${encodeURIComponent(connection.appId)}`;

const checkEndpointId = (z: ZObject, endpointId: string): string => {
  if (!isEndpointId(endpointId) && !isPathSafeUid(endpointId)) {
    throw new z.errors.Error(
      "This Zap's link to its provider endpoint is damaged. Turn the Zap off and on again to create a new one.",
      'InvalidEndpointId',
      400,
    );
  }
  return encodeURIComponent(endpointId);
};

const appNotFound = (connection: Connection): string =>
  `The provider has no Consumer App with the ID ${connection.appId} for this API Access Key. ` +
  'Check that the Consumer App ID and the key come from the same provider account, and the same region (a key for the EU region ends in .eu).';

export const getApplication = async (z: ZObject, connection: Connection): Promise<ApplicationOut> => {
  const action = 'reading your Consumer App';
  const answer = await callProvider(z, connection, {
    method: 'GET',
    path: appPath(connection),
    action,
    notFound: appNotFound(connection),
  });
  return decodeAnswer(z, ApplicationOut, answer.body, action);
};

export type EventTypeState = 'exists' | 'created' | 'not-permitted';

/**
 * Makes sure AUCTION_STATUS_CHANGE is registered: read it, register it as the
 * published interface gives it when missing. A key that may not manage event
 * types (403) is not fatal: the auction service usually registers it.
 */
export const ensureEventType = async (z: ZObject, connection: Connection): Promise<EventTypeState> => {
  const read = await callProvider(z, connection, {
    method: 'GET',
    path: `/api/v1/event-type/${EVENT_TYPE_NAME}`,
    action: 'checking the AUCTION_STATUS_CHANGE event type',
    accept: [403, 404],
  });
  if (read.status === 403) return 'not-permitted';
  if (read.status !== 404) {
    decodeAnswer(z, EventTypeOut, read.body, 'checking the AUCTION_STATUS_CHANGE event type');
    return 'exists';
  }
  const created = await callProvider(z, connection, {
    method: 'POST',
    path: '/api/v1/event-type',
    body: auctionStatusChangeEventType,
    action: 'registering the AUCTION_STATUS_CHANGE event type',
    accept: [403, 409],
  });
  if (created.status === 403) return 'not-permitted';
  return created.status === 409 ? 'exists' : 'created';
};

export interface NewEndpoint {
  url: string;
  uid: string;
  description: string;
}

const endpointNotFoundForApp = (connection: Connection): string =>
  `${appNotFound(connection)} Then turn the Zap on again.`;

export const getEndpoint = async (z: ZObject, connection: Connection, idOrUid: string): Promise<EndpointOut> => {
  const action = "reading this Zap's endpoint";
  const answer = await callProvider(z, connection, {
    method: 'GET',
    path: `${appPath(connection)}/endpoint/${checkEndpointId(z, idOrUid)}`,
    action,
  });
  return decodeAnswer(z, EndpointOut, answer.body, action);
};

/**
 * Creates the endpoint that delivers AUCTION_STATUS_CHANGE to the Zap. The
 * `uid` is derived from the target URL, so a retried subscribe meets a 409 and
 * reuses the endpoint the first attempt made instead of adding a second one.
 */
export const createEndpoint = async (
  z: ZObject,
  connection: Connection,
  endpoint: NewEndpoint,
): Promise<EndpointOut> => {
  const action = 'creating the endpoint that sends auction events to this Zap';
  const answer = await callProvider(z, connection, {
    method: 'POST',
    path: `${appPath(connection)}/endpoint`,
    body: {
      url: endpoint.url,
      uid: endpoint.uid,
      description: endpoint.description,
      eventTypes: [EVENT_TYPE_NAME],
    },
    action,
    accept: [409],
    notFound: endpointNotFoundForApp(connection),
    invalid:
      "The provider refused to create the endpoint (422), most likely because the AUCTION_STATUS_CHANGE event type is not registered in your Consumer App's account yet. " +
      "Run the set-up (npm run setup) or ask the auction service's support team to register it, then turn the Zap on again.",
  });
  if (answer.status === 409) return getEndpoint(z, connection, endpoint.uid);
  return decodeAnswer(z, EndpointOut, answer.body, action);
};

export const getEndpointSecret = async (z: ZObject, connection: Connection, endpointId: string): Promise<string> => {
  const action = "reading the signing secret of this Zap's endpoint";
  const answer = await callProvider(z, connection, {
    method: 'GET',
    path: `${appPath(connection)}/endpoint/${checkEndpointId(z, endpointId)}/secret`,
    action,
    notFound:
      "This Zap's endpoint no longer exists at the provider. Turn the Zap off and on again to create a new one.",
  });
  return decodeAnswer(z, EndpointSecretOut, answer.body, action).key;
};

/** Deletes an endpoint; one that is already gone counts as deleted. */
export const deleteEndpoint = async (
  z: ZObject,
  connection: Connection,
  endpointId: string,
): Promise<'deleted' | 'already-gone'> => {
  const answer = await callProvider(z, connection, {
    method: 'DELETE',
    path: `${appPath(connection)}/endpoint/${checkEndpointId(z, endpointId)}`,
    action: "removing this Zap's endpoint",
    accept: [404],
  });
  return answer.status === 404 ? 'already-gone' : 'deleted';
};

/** The Consumer App's most recent AUCTION_STATUS_CHANGE messages, newest first. */
export const listRecentMessages = async (z: ZObject, connection: Connection, limit: number): Promise<MessageOut[]> => {
  const action = 'reading recent auction events from your Consumer App';
  const answer = await callProvider(z, connection, {
    method: 'GET',
    path: `${appPath(connection)}/msg`,
    params: { event_types: EVENT_TYPE_NAME, limit, with_content: true },
    action,
    notFound: appNotFound(connection),
  });
  return decodeAnswer(z, ListResponseMessageOut, answer.body, action).data;
};
