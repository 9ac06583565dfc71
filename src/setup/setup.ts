import { createHash } from 'node:crypto';
import { ApplicationOut, EndpointOut } from '../provider/codecs';
import { EVENT_TYPE_NAME, ensureEventType } from '../provider/eventType';
import { endpointUid } from '../provider/ids';
import { ProviderClient, ProviderFailure } from './client';
import { ensureIntegrationKey, type IntegrationKeyOutcome } from './integrationKey';

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
  /** A Consumer App made already (in Svix's dashboard): used as it is, instead of one the set-up makes. */
  appId?: string;
  endpointUrl?: string;
  /** Make sure Zapier has an integration key (`ensure`), or replace it (`rotate`). */
  integrationKey?: 'ensure' | 'rotate';
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
  integrationKey?: IntegrationKeyOutcome;
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

const readApp = async (client: ProviderClient, appId: string): Promise<ApplicationOut> => {
  const action = 'reading your Consumer App';
  const answer = await client.call({
    method: 'GET',
    path: `/api/v1/app/${encodeURIComponent(appId)}`,
    action,
    notFound: `Check the --app-id option: Svix has no Consumer App ${appId} in the environment of this key.`,
  });
  return client.decode(ApplicationOut, answer.body, action);
};

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

/** The set-up registers the event type, and brings its schema back to the published one. */
const registerEventType = async (client: ProviderClient): Promise<SetupResult['eventType']> => {
  const state = await ensureEventType(client, { updateSchema: true });
  // A key that may not manage event types cannot do the set-up's job: say which key can.
  if (state === 'not-permitted' || state === 'archived-not-permitted') {
    throw new ProviderFailure({
      kind: 'error',
      code: 'ProviderForbidden',
      status: 403,
      message: `This key may not register the ${EVENT_TYPE_NAME} event type (403). Run the set-up with an API Access Key of the Svix account that owns the Consumer App (an integration key cannot do this).`,
    });
  }
  // An archived one is brought back with the published schema: an update.
  return state === 'unarchived' ? 'updated' : state;
};

const ensureEndpoint = async (client: ProviderClient, appId: string, url: string) => {
  const action = 'adding your endpoint';
  const uid = endpointUid('setup', url);
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
  const { app, created } = options.appId
    ? { app: await readApp(options.client, options.appId), created: false }
    : await ensureApp(options.client, name);
  say(`${created ? 'Created' : 'Using'} the Consumer App "${app.name}" (${app.id}).`);
  const eventType = await registerEventType(options.client);
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
  if (options.integrationKey) {
    result.integrationKey = await ensureIntegrationKey(options.client, app.id, {
      rotate: options.integrationKey === 'rotate',
    });
    say(
      {
        created: 'Added an integration for Zapier to the Consumer App, with a new integration key.',
        rotated: "Replaced the integration key of the Consumer App's integration for Zapier.",
        kept: 'The Consumer App already has an integration for Zapier; its key is kept as it is.',
      }[result.integrationKey.kind],
    );
  }
  return result;
};
