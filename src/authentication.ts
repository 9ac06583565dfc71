import type { Bundle, ZObject } from 'zapier-platform-core';
import type * as Access from './zap/access';
import { getApplication } from './svix/api';
import { callerOf } from './svix/client';

/**
 * The dashboard pages where a person finds each value; Zapier shows these links under the fields. Svix
 * documents the API Access page's address; the Consumer Applications list has none of its own, so the
 * help says to sign in at the dashboard and open that menu. Most people building Zaps cannot sign in
 * there: each help text first names whoever can give them the value.
 */
export const API_ACCESS_URL = 'https://dashboard.svix.com/api-access';
export const DASHBOARD_URL = 'https://dashboard.svix.com/';

/** The key field's label: the set-up's output names it too. */
export const API_KEY_LABEL = 'Integration Key or API Access Key';

/** What the connection test returns: the Consumer App's id and name, and the connection's label; nothing secret. */
export interface ConnectionTestResult {
  id: string;
  name: string;
  label: string;
}

/** Names longer than this are cut in the label, which Zapier shows in narrow lists. */
const LABEL_NAME_LENGTH = 40;

/**
 * What Zapier shows for the connection: the Consumer App's name, which its owner chose, and the last four
 * characters of its ID, which tell apart two apps of the same name (two auction houses that kept the
 * set-up's default name, or one house's Production and Development apps) without a 31-character ID.
 */
export const connectionLabelOf = (app: { id: string; name: string }): string => {
  const name = app.name.trim() || 'Consumer App';
  const short = name.length > LABEL_NAME_LENGTH ? `${name.slice(0, LABEL_NAME_LENGTH - 1).trimEnd()}…` : name;
  return `${short} (app_…${app.id.slice(-4)})`;
};

export const testConnection = async (z: ZObject, bundle: Bundle): Promise<ConnectionTestResult> => {
  // callerOf refuses a malformed app id or an unsafe server URL before any request.
  const caller = callerOf(z, bundle, 'zap-editor');
  const app = await getApplication(caller);
  // What turning a Zap on and running it will need: said now, not weeks later after a change of secret.
  // Loaded here, when a connection is tested: no delivery needs it, so every process starts sooner without it.
  const { checkAccess }: typeof Access = require('./zap/access');
  await checkAccess(caller);
  return { id: app.id, name: app.name, label: connectionLabelOf(app) };
};

export const authentication = {
  type: 'custom' as const,
  fields: [
    {
      key: 'apiKey',
      label: API_KEY_LABEL,
      type: 'password' as const,
      required: true,
      helpText: `Best: an **integration key** (\`integsk_…\`) from whoever set up your Consumer App: it works only in the Consumer App named below. Or an **API Access Key** from the [API Access page](${API_ACCESS_URL}) of the Svix environment (usually **Production**) that holds it.`,
    },
    {
      key: 'appId',
      label: 'Consumer App ID',
      type: 'string' as const,
      required: true,
      helpText: `The ID (\`app_…\`) of the Consumer App the auction service sends events to: whoever set up your Consumer App gives it with the key. It is not secret. If that is you: sign in to [Svix's dashboard](${DASHBOARD_URL}) and open **Consumer Applications**.`,
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
  connectionLabel: '{{bundle.inputData.label}}',
};

/** Adds Svix's headers to every request this app makes (all of them go to Svix). */
export const addSvixHeaders = <R extends { headers?: Record<string, string> }>(
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
