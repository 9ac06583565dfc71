import { IntegrationKeyOut, IntegrationOut, ListResponseIntegrationOut } from './codecs';
import type { SvixClient } from './client';

/**
 * The key Zapier connects with: an integration key of the Consumer App
 * (`integsk_…`), which works inside that app only, so it can be revoked or
 * replaced without touching the account's API Access Keys, nor the one the
 * auction service holds. Svix shows a key once, when it is made: a
 * second run keeps the key that works, and says how to get a new one.
 */

/** The integration the set-up keeps for Zapier, found again by this name. */
export const ZAPIER_INTEGRATION_NAME = 'Zapier: Auction Status Changed';

export type IntegrationKeyOutcome =
  /** Made now, with its first key. */
  | { kind: 'created'; integrationId: string; key: string }
  /** It existed: its key was replaced, and the old one no longer works. */
  | { kind: 'rotated'; integrationId: string; key: string }
  /** It existed and keeps its key, which Svix cannot show again. */
  | { kind: 'kept'; integrationId: string };

const appPath = (appId: string) => `/api/v1/app/${encodeURIComponent(appId)}/integration`;

/** At most this many pages of integrations are read (250 each). */
const MAX_PAGES = 20;

const findIntegration = async (client: SvixClient, appId: string): Promise<IntegrationOut | undefined> => {
  const action = "reading your Consumer App's integrations";
  let iterator: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await client.call({
      method: 'GET',
      path: appPath(appId),
      query: { limit: '250', ...(iterator ? { iterator } : {}) },
      action,
    });
    const list = client.decode(ListResponseIntegrationOut, answer.body, action);
    const found = list.data.find((integration) => integration.name === ZAPIER_INTEGRATION_NAME);
    if (found || list.done || !list.iterator) return found;
    iterator = list.iterator;
  }
  return undefined;
};

const rotateKey = async (client: SvixClient, appId: string, integrationId: string): Promise<string> => {
  const action = 'making the integration key for Zapier';
  const answer = await client.call({
    method: 'POST',
    path: `${appPath(appId)}/${encodeURIComponent(integrationId)}/key/rotate`,
    action,
  });
  return client.decode(IntegrationKeyOut, answer.body, action).key;
};

export const ensureIntegrationKey = async (
  client: SvixClient,
  appId: string,
  options: { rotate: boolean },
): Promise<IntegrationKeyOutcome> => {
  const existing = await findIntegration(client, appId);
  if (existing) {
    if (!options.rotate) return { kind: 'kept', integrationId: existing.id };
    return { kind: 'rotated', integrationId: existing.id, key: await rotateKey(client, appId, existing.id) };
  }
  const action = 'adding an integration for Zapier to your Consumer App';
  const created = await client.call({
    method: 'POST',
    path: appPath(appId),
    body: { name: ZAPIER_INTEGRATION_NAME },
    action,
  });
  const integration = client.decode(IntegrationOut, created.body, action);
  // Svix shows a key only when it is made: this one is the first Zapier sees.
  return { kind: 'created', integrationId: integration.id, key: await rotateKey(client, appId, integration.id) };
};
