import { createHash } from 'node:crypto';
import { ApplicationOut, EndpointOut } from '../../svix/codecs';
import { ListResponseApplicationOut } from './codecs';
import { EVENT_TYPE_NAME, ensureEventType } from '../../svix/eventType';
import { SvixClient, SvixFailure } from './client';
import { ensureIntegrationKey, type IntegrationKeyOutcome } from './integrationKey';

/**
 * The consumer's set-up steps of the published interface (§4), done once and
 * safely repeatable: find (or, asked or when there is none, create) the
 * Consumer App, register AUCTION_STATUS_CHANGE with the published schema, and
 * optionally add an endpoint for a receiver that is not Zapier.
 */

/** The name of the Consumer App the set-up makes in an environment that has none, without --app-name. */
export const DEFAULT_APP_NAME = 'Auction Status Webhooks';

export interface SetupOptions {
  client: SvixClient;
  /** Find the Consumer App of this name, or make it: the only way to make one beside others. */
  appName?: string;
  /** A Consumer App made already (in Svix's dashboard): used as it is, instead of one the set-up makes. */
  appId?: string;
  endpointUrl?: string;
  /** Make sure Zapier has an integration key (`ensure`), or replace it (`rotate`). */
  integrationKey?: 'ensure' | 'rotate';
  /** One line of progress for a person. */
  say?: (line: string) => void;
}

/**
 * How the set-up came to the Consumer App it used, for its output: an app the auction service already
 * sends to must never be swapped for a new, empty one without anybody noticing.
 */
export type AppChoice =
  /** Given with --app-id. */
  | 'given'
  /** Named with --app-name: found by that name, or made with it. */
  | 'named'
  /** The only Consumer App of the key's environment. */
  | 'only'
  /** Among several, the one an earlier run made with the default name. */
  | 'made-before'
  /** The environment had none: made with the default name. */
  | 'none-existed';

/** Several Consumer Apps, none given or named: the set-up does not guess, nor make another. */
export class AppNotChosen extends Error {
  constructor(
    /** The first of them, with their names, for the person to choose from. */
    readonly apps: readonly ApplicationOut[],
    /** Whether there are more than those listed. */
    readonly more: boolean,
  ) {
    super('Several Consumer Apps, and none chosen with --app-id or --app-name.');
    this.name = 'AppNotChosen';
  }
}

export interface SetupResult {
  appId: string;
  appName: string;
  appCreated: boolean;
  appChoice: AppChoice;
  eventType: 'created' | 'updated' | 'unchanged';
  endpointId?: string;
  endpointCreated?: boolean;
  integrationKey?: IntegrationKeyOutcome;
}

/** A Svix uid from a name: the same name always finds the same Consumer App. */
export const appUidFor = (name: string): string => {
  const slug = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 200);
  return slug === '' ? `app-${createHash('sha256').update(name).digest('hex').slice(0, 16)}` : slug;
};

const readApp = async (client: SvixClient, appId: string): Promise<ApplicationOut> => {
  const action = 'reading your Consumer App';
  const answer = await client.call({
    method: 'GET',
    path: `/api/v1/app/${encodeURIComponent(appId)}`,
    action,
    notFound: `Check the --app-id option: Svix has no Consumer App ${appId} in the environment of this key.`,
  });
  return client.decode(ApplicationOut, answer.body, action);
};

/** One page of the environment's Consumer Apps: an auction house's environment holds a few. */
const APP_PAGE = 250;

const listApps = async (client: SvixClient) => {
  const action = 'listing your Consumer Apps';
  const answer = await client.call({ method: 'GET', path: '/api/v1/app', query: { limit: String(APP_PAGE) }, action });
  return client.decode(ListResponseApplicationOut, answer.body, action);
};

const ensureApp = async (client: SvixClient, name: string) => {
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
const registerEventType = async (client: SvixClient): Promise<SetupResult['eventType']> => {
  const state = await ensureEventType(client, { updateSchema: true });
  // A key that may not manage event types cannot do the set-up's job: say which key can.
  if (state === 'not-permitted' || state === 'archived-not-permitted') {
    throw new SvixFailure({
      kind: 'error',
      code: 'SvixForbidden',
      status: 403,
      message: `Run the set-up with an API Access Key from the API Access page of the environment that holds the Consumer App: this key may not register the ${EVENT_TYPE_NAME} event type.`,
      log: 'Svix answered 403 while registering the event type.',
    });
  }
  // An archived one is brought back with the published schema: an update.
  return state === 'unarchived' ? 'updated' : state;
};

const ensureEndpoint = async (client: SvixClient, appId: string, url: string) => {
  const action = 'adding your endpoint';
  const uid = setupEndpointUid(url);
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

/**
 * The Consumer App to use: the one given, or named (found, or made with that name); else the environment's only
 * one, or, among several, the one an earlier run made; a new one only when there is none. Making a second app
 * unasked would leave the auction service sending to the first, and every Zap on the new one waiting for nothing.
 */
const chooseApp = async (
  client: SvixClient,
  options: Pick<SetupOptions, 'appId' | 'appName'>,
): Promise<{ app: ApplicationOut; created: boolean; choice: AppChoice }> => {
  if (options.appId) return { app: await readApp(client, options.appId), created: false, choice: 'given' };
  const named = options.appName?.trim();
  if (named) return { ...(await ensureApp(client, named)), choice: 'named' };
  const listed = await listApps(client);
  const [only] = listed.data;
  if (only === undefined) return { ...(await ensureApp(client, DEFAULT_APP_NAME)), choice: 'none-existed' };
  if (listed.data.length === 1 && listed.done) return { app: only, created: false, choice: 'only' };
  const madeBefore = listed.data.find((app) => app.uid === appUidFor(DEFAULT_APP_NAME));
  if (madeBefore) return { app: madeBefore, created: false, choice: 'made-before' };
  throw new AppNotChosen(listed.data.slice(0, 10), listed.data.length > 10 || !listed.done);
};

/** What the set-up says about the Consumer App it used. */
const APP_LINES: Record<AppChoice, (app: ApplicationOut, created: boolean) => string> = {
  given: (app) => `Using the Consumer App "${app.name}" (${app.id}), given with --app-id.`,
  named: (app, created) =>
    created
      ? `Created the Consumer App "${app.name}" (${app.id}), named with --app-name.`
      : `Using the Consumer App "${app.name}" (${app.id}), found by the name given with --app-name.`,
  only: (app) => `Using the Consumer App "${app.name}" (${app.id}), the only one in this environment.`,
  'made-before': (app) =>
    `Using the Consumer App "${app.name}" (${app.id}), which an earlier run of the set-up made (--app-id chooses another).`,
  'none-existed': (app) =>
    `Created the Consumer App "${app.name}" (${app.id}), as this environment had none (--app-name names it).`,
};

export const runSetup = async (options: SetupOptions): Promise<SetupResult> => {
  const say = options.say ?? (() => undefined);
  const { app, created, choice } = await chooseApp(options.client, options);
  say(APP_LINES[choice](app, created));
  const eventType = await registerEventType(options.client);
  say(
    {
      created: 'Registered the AUCTION_STATUS_CHANGE event type (schema version 1).',
      updated: 'Updated the AUCTION_STATUS_CHANGE event type to the published schema (version 1).',
      unchanged: 'The AUCTION_STATUS_CHANGE event type is already registered with the published schema.',
    }[eventType],
  );
  const result: SetupResult = { appId: app.id, appName: app.name, appCreated: created, appChoice: choice, eventType };
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

/**
 * A stable uid for the set-up's endpoint at an address: made again for the same address, it is found by it (Svix
 * answers 409) instead of a second one being added.
 */
export const setupEndpointUid = (url: string): string =>
  `setup-${createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 40)}`;
