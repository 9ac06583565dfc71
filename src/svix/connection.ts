import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { isAppId } from './ids';
import { serverUrlFor } from './serverUrl';

/** The connection's fields, as Zapier stores them in `bundle.authData`. */
export const AuthData = t.partial(
  {
    apiKey: t.union([t.string, t.null]),
    appId: t.union([t.string, t.null]),
    serverUrl: t.union([t.string, t.null]),
  },
  'AuthData',
);

export interface Connection {
  apiKey: string;
  appId: string;
  /** Svix API's base address, without a trailing slash. */
  baseUrl: string;
}

export type ConnectionResult = { ok: true; connection: Connection } | { ok: false; message: string };

export const APP_ID_HELP =
  'Copy the Consumer App ID again from whoever set up your Consumer App, then reconnect: it starts with app_ followed by 27 letters or digits.';

/** Reads and checks the connection's fields before any request is made. */
export const readConnection = (authData: unknown): ConnectionResult => {
  const decoded = AuthData.decode(authData);
  const fields = isRight(decoded) ? decoded.right : {};
  const apiKey = (fields.apiKey ?? '').trim();
  const appId = (fields.appId ?? '').trim();
  if (apiKey === '') {
    return {
      ok: false,
      message:
        'Reconnect your account in Zapier with a key: ask whoever set up your Consumer App for an integration key or an API Access Key.',
    };
  }
  if (!isAppId(appId)) {
    return { ok: false, message: APP_ID_HELP };
  }
  const server = serverUrlFor(apiKey, fields.serverUrl ?? undefined);
  if (!server.ok) return { ok: false, message: server.problem };
  return { ok: true, connection: { apiKey, appId, baseUrl: server.url } };
};

/**
 * Which connection a bundle is for, as a key for what a process keeps in
 * memory across invocations (z.cache is scoped by the platform itself): its
 * Consumer App and the server it talks to.
 */
export const connectionScope = (authData: unknown): string => {
  const decoded = AuthData.decode(authData);
  const fields = isRight(decoded) ? decoded.right : {};
  return `${(fields.appId ?? '').trim()}\u0000${(fields.serverUrl ?? '').trim()}`;
};
