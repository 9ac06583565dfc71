import type { Bundle, ZObject } from 'zapier-platform-core';
import { checkAccess } from './provider/access';
import { getApplication } from './provider/api';
import { callerOf } from './provider/request';

/**
 * The dashboard pages where a person finds each value; Zapier shows these links under the fields. Svix
 * documents the API Access page's address; the Consumer Applications list has none of its own, so the
 * link opens the dashboard, whose menu holds it.
 */
export const API_ACCESS_URL = 'https://dashboard.svix.com/api-access';
export const DASHBOARD_URL = 'https://dashboard.svix.com/';

/** The key field's label: the set-up's output names it too. */
export const API_KEY_LABEL = 'Integration Key or API Access Key';

/** What the connection test returns: the Consumer App's id and name, nothing secret. */
export interface ConnectionTestResult {
  id: string;
  name: string;
}

export const testConnection = async (z: ZObject, bundle: Bundle): Promise<ConnectionTestResult> => {
  // callerOf refuses a malformed app id or an unsafe server URL before any request.
  const caller = callerOf(z, bundle, 'zap-editor');
  const app = await getApplication(caller);
  // What turning a Zap on and running it will need: said now, not weeks later after a change of secret.
  await checkAccess(caller);
  return { id: app.id, name: app.name };
};

export const authentication = {
  type: 'custom' as const,
  fields: [
    {
      key: 'apiKey',
      label: API_KEY_LABEL,
      type: 'password' as const,
      required: true,
      helpText: `Best: an **integration key** (\`integsk_…\`), which works only in that one Consumer App. Whoever set up your Consumer App makes it for you. Or an **API Access Key** of the Svix environment (usually **Production**) that holds the app: [API Access page](${API_ACCESS_URL}).`,
    },
    {
      key: 'appId',
      label: 'Consumer App ID',
      type: 'string' as const,
      required: true,
      helpText: `The ID (\`app_…\`) of the Consumer App the auction service sends events to, from the **Consumer Applications** list in [Svix's dashboard](${DASHBOARD_URL}). It is not secret.`,
    },
    {
      key: 'serverUrl',
      label: 'Server URL',
      type: 'string' as const,
      required: false,
      helpText: 'Leave empty. Only for a self-hosted Svix, or an address Svix gave you (it starts with https://).',
    },
  ],
  test: testConnection,
  connectionLabel: '{{bundle.inputData.name}} ({{bundle.inputData.id}})',
};

/** Adds Svix's headers to every request this app makes (all of them go to Svix). */
export const addProviderHeaders = <R extends { headers?: Record<string, string> }>(
  request: R,
  _z: ZObject,
  bundle: Bundle,
): R => {
  const apiKey = typeof bundle.authData.apiKey === 'string' ? bundle.authData.apiKey.trim() : '';
  request.headers = {
    ...request.headers,
    Accept: 'application/json',
    'Content-Type': 'application/json',
    ...(apiKey === '' ? {} : { Authorization: `Bearer ${apiKey}` }),
  };
  return request;
};
