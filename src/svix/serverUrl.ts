/**
 * Where Svix's API lives. An explicit server URL wins; otherwise the
 * region is read from the API key's suffix after its first dot
 * (`testsk_….eu` → https://api.eu.svix.com), else the global address.
 */
export const DEFAULT_SERVER_URL = 'https://api.svix.com';
export const REGIONS = ['eu', 'us', 'ca', 'au', 'in'] as const;

export const regionOfKey = (apiKey: string): string | undefined => {
  const dot = apiKey.indexOf('.');
  if (dot < 0) return undefined;
  const suffix = apiKey.slice(dot + 1).toLowerCase();
  return REGIONS.find((region) => region === suffix);
};

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** True for 127.0.0.0/8, ::1 and localhost: the only hosts plain http is allowed for. */
export const isLoopbackHost = (hostname: string): boolean =>
  LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(hostname);

export type ServerUrlResult = { ok: true; url: string } | { ok: false; problem: string };

/** Where the address was typed: the connection's Server URL field in Zapier, or the set-up's option. */
export type ServerUrlSource = 'zapier' | 'setup';

const NAMED: Record<ServerUrlSource, { name: string; leave: string }> = {
  zapier: { name: 'the Server URL', leave: 'Leave the Server URL empty' },
  setup: { name: 'the --server-url option', leave: 'Leave the --server-url option out' },
};

/** Checks a server URL typed by a person; the answer says what to do first, without echoing it. */
export const checkServerUrl = (raw: string, source: ServerUrlSource = 'zapier'): ServerUrlResult => {
  const { name, leave } = NAMED[source];
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    return {
      ok: false,
      problem: `${leave} to use Svix's default, or give an address such as https://api.eu.svix.com: ${name} is not a web address.`,
    };
  }
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    return {
      ok: false,
      problem: `Give ${name} as a plain address such as https://api.eu.svix.com, without a user name, password, query or fragment.`,
    };
  }
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    return {
      ok: false,
      problem: `Start ${name} with https://, so the key is never sent unencrypted (plain http:// is only for a sandbox on this computer, such as http://127.0.0.1).`,
    };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, problem: `Start ${name} with https://.` };
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  return { ok: true, url: `${parsed.protocol}//${parsed.host}${path}` };
};

export const serverUrlFor = (
  apiKey: string,
  explicit: string | undefined,
  source: ServerUrlSource = 'zapier',
): ServerUrlResult => {
  if (explicit !== undefined && explicit.trim() !== '') return checkServerUrl(explicit, source);
  const region = regionOfKey(apiKey);
  return { ok: true, url: region ? `https://api.${region}.svix.com` : DEFAULT_SERVER_URL };
};
