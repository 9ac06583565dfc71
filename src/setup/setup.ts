import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ApplicationOut, EndpointOut, EventTypeOut } from '../provider/codecs';
import { auctionStatusChangeEventType, EVENT_TYPE_NAME, SCHEMA_VERSION } from '../provider/eventType';
import { ProviderClient } from './client';

/**
 * The consumer's set-up steps of the published interface (§4), done once and
 * safely repeatable: create (or reuse) the Consumer App, register
 * AUCTION_STATUS_CHANGE with the published schema, and optionally add an
 * endpoint for a receiver that is not Zapier.
 */

export const DEFAULT_APP_NAME = 'Auction Status Webhooks';

export interface SetupOptions {
  client: ProviderClient;
  appName?: string;
  endpointUrl?: string;
  /** One line of progress for a person. */
  say?: (line: string) => void;
}

export interface SetupResult {
  appId: string;
  appName: string;
  appCreated: boolean;
  eventType: 'created' | 'updated' | 'unchanged';
  endpointId?: string;
  endpointCreated?: boolean;
}

/** A provider uid from a name: the same name always finds the same Consumer App. */
export const appUidFor = (name: string): string => {
  const slug = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 200);
  return slug === '' ? `app-${createHash('sha256').update(name).digest('hex').slice(0, 16)}` : slug;
};

export const endpointUidFor = (url: string): string =>
  `setup-${createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 40)}`;

const ensureApp = async (client: ProviderClient, name: string) => {
  const action = 'creating your Consumer App';
  const answer = await client.call({
    method: 'POST',
    path: '/api/v1/app',
    query: { get_if_exists: 'true' },
    body: { name, uid: appUidFor(name) },
    action,
  });
  return { app: client.decode(ApplicationOut, answer.body, action), created: answer.status === 201 };
};

const ensureEventType = async (client: ProviderClient): Promise<SetupResult['eventType']> => {
  const path = `/api/v1/event-type/${EVENT_TYPE_NAME}`;
  const read = await client.call({
    method: 'GET',
    path,
    action: 'reading the AUCTION_STATUS_CHANGE event type',
    accept: [404],
  });
  if (read.status === 404) {
    await client.call({
      method: 'POST',
      path: '/api/v1/event-type',
      body: auctionStatusChangeEventType,
      action: 'registering the AUCTION_STATUS_CHANGE event type',
    });
    return 'created';
  }
  const existing = client.decode(EventTypeOut, read.body, 'reading the AUCTION_STATUS_CHANGE event type');
  const schemas = typeof existing.schemas === 'object' && existing.schemas !== null ? existing.schemas : {};
  const published = auctionStatusChangeEventType.schemas[SCHEMA_VERSION];
  const current: unknown = Object.entries(schemas).find(([version]) => version === SCHEMA_VERSION)?.[1];
  if (existing.archived !== true && isDeepStrictEqual(current, published)) return 'unchanged';
  await client.call({
    method: 'PUT',
    path,
    body: {
      // The description may be customised (§4.2): keep whatever is there.
      description: existing.description || auctionStatusChangeEventType.description,
      archived: false,
      schemas: { ...schemas, [SCHEMA_VERSION]: published },
    },
    action: 'updating the AUCTION_STATUS_CHANGE event type to the published schema',
  });
  return 'updated';
};

const ensureEndpoint = async (client: ProviderClient, appId: string, url: string) => {
  const action = 'adding your endpoint';
  const uid = endpointUidFor(url);
  const created = await client.call({
    method: 'POST',
    path: `/api/v1/app/${encodeURIComponent(appId)}/endpoint`,
    body: {
      url,
      uid,
      description: 'Receives AUCTION_STATUS_CHANGE (added by npm run setup).',
      eventTypes: [EVENT_TYPE_NAME],
    },
    action,
    accept: [409],
  });
  if (created.status !== 409) return { endpoint: client.decode(EndpointOut, created.body, action), created: true };
  const existing = await client.call({
    method: 'GET',
    path: `/api/v1/app/${encodeURIComponent(appId)}/endpoint/${uid}`,
    action,
  });
  return { endpoint: client.decode(EndpointOut, existing.body, action), created: false };
};

export const runSetup = async (options: SetupOptions): Promise<SetupResult> => {
  const say = options.say ?? (() => undefined);
  const name = options.appName?.trim() || DEFAULT_APP_NAME;
  const { app, created } = await ensureApp(options.client, name);
  say(`${created ? 'Created' : 'Reusing'} the Consumer App "${app.name}" (${app.id}).`);
  const eventType = await ensureEventType(options.client);
  say(
    {
      created: 'Registered the AUCTION_STATUS_CHANGE event type (schema version 1).',
      updated: 'Updated the AUCTION_STATUS_CHANGE event type to the published schema (version 1).',
      unchanged: 'The AUCTION_STATUS_CHANGE event type is already registered with the published schema.',
    }[eventType],
  );
  const result: SetupResult = { appId: app.id, appName: app.name, appCreated: created, eventType };
  if (options.endpointUrl) {
    const { endpoint, created: endpointCreated } = await ensureEndpoint(options.client, app.id, options.endpointUrl);
    say(`${endpointCreated ? 'Added' : 'Reusing'} the endpoint for your receiver. Endpoint ID: ${endpoint.id}`);
    result.endpointId = endpoint.id;
    result.endpointCreated = endpointCreated;
  }
  return result;
};
