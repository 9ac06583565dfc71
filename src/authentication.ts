import type { Bundle, ZObject } from 'zapier-platform-core';
import { checkAccess } from './provider/access';
import { getApplication } from './provider/api';
import { callerOf } from './provider/request';

/** Where a person finds each value; Zapier shows these links under the fields. */
export const API_ACCESS_HELP_URL = 'https://docs.svix.com/api-keys';
export const CONSUMER_APPS_HELP_URL = 'https://docs.svix.com/quickstart';

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
      helpText: `Use the key of the Svix account, and the environment (usually **Production**), that holds the Consumer App the auction service sends to. Recommended: an **integration key** (it starts with \`integsk_\`): a key that works only in that one Consumer App, so it can be replaced without touching anything else. Whoever set up your Consumer App makes it for you. Otherwise, an **API Access Key** also works: create one on the **API Access** page of Svix's dashboard (Svix shows it only once, so copy it then). [Where to find it](${API_ACCESS_HELP_URL})`,
    },
    {
      key: 'appId',
      label: 'Consumer App ID',
      type: 'string' as const,
      required: true,
      helpText: `The ID of the Consumer App the auction service sends events to. It starts with \`app_\` and is shown in the **Consumer Applications** list in Svix's dashboard. It is not secret. [Where to find it](${CONSUMER_APPS_HELP_URL})`,
    },
    {
      key: 'serverUrl',
      label: 'Server URL',
      type: 'string' as const,
      required: false,
      helpText:
        "Leave empty: it is worked out from your key's region (a key ending in `.eu` uses https://api.eu.svix.com). Fill it in only if Svix told you to use another address; it must start with https://.",
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
