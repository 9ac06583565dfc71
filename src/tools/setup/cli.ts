import { parseArgs } from 'node:util';
import { askHidden, QuestionStopped } from '../cli/askHidden';
import { commandLineAdvice, npmHint, optionsNpmTook } from '../cli/npmOptions';
import { runCommand } from '../cli/runCommand';
import { isAppId, isIntegrationKey } from '../../svix/ids';
import { serverUrlFor } from '../../svix/serverUrl';
import { SvixClient, SvixFailure } from './client';
import { API_KEY_LABEL } from '../../authentication';
import type { IntegrationKeyOutcome } from './integrationKey';
import { AppNotChosen, DEFAULT_APP_NAME, runSetup } from './setup';

const USAGE = `Set up your Consumer App to receive the auction service's AUCTION_STATUS_CHANGE events.

Usage: npm run setup -- [--server-url URL] [--app-name NAME | --app-id ID] [--endpoint-url URL]
                        [--integration-key | --rotate-integration-key]

The API Access Key of your Svix account is read from the SVIX_API_KEY environment variable
(export SVIX_API_KEY=…, then run the set-up); without it, the set-up asks for the key and
does not show what you type.

  --server-url URL            Svix's API address (default: from the key's region)
  --app-id ID                 use this Consumer App, made already in Svix's dashboard (app_…)
  --app-name NAME             use the Consumer App of this name, or make it: name it after your
                              auction house, as Zapier shows it on each connection
                              (without either: the environment's only Consumer App, or a new one
                              named "${DEFAULT_APP_NAME}" when it has none)
  --endpoint-url URL          also add an endpoint for a receiver that is not Zapier
  --integration-key           also make the key to connect Zapier with: an integration key that works
                              only in this Consumer App (printed once, the first time)
  --rotate-integration-key    replace that key; Zapier connections using the old one must be reconnected
                              (one or the other: the first makes the key once, the second replaces it)

Running it again changes nothing: it reuses what it made before.`;

/**
 * The set-up's options, as parseArgs takes them. --api-key still works for
 * scripts written before SVIX_API_KEY, but is shown nowhere: a key typed on a
 * command line stays in the shell's history and in the process list.
 */
const OPTIONS = {
  'api-key': { type: 'string' },
  'server-url': { type: 'string' },
  'app-name': { type: 'string' },
  'app-id': { type: 'string' },
  'endpoint-url': { type: 'string' },
  'integration-key': { type: 'boolean' },
  'rotate-integration-key': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const OPTION_NAMES = Object.keys(OPTIONS);

/** The command line read with OPTIONS; throws (with a `code`) on what the set-up does not take. */
const parseOptions = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, strict: true });

/**
 * An integration key given for the API Access Key: the likely mistake while replacing the key Zapier uses.
 * It is the right key for Zapier, only of the wrong kind for the set-up; said before any call, since Svix's
 * refusal would read as a key of the wrong account.
 */
const INTEGRATION_KEY_GIVEN =
  'Give the set-up an API Access Key from the API Access page of your Svix dashboard, in the environment that ' +
  'holds the Consumer App: this is an integration key (integsk_…), the kind Zapier connects with, and it works ' +
  'inside one Consumer App only, so it cannot run the set-up. To replace it, run the set-up with an API Access ' +
  'Key and --rotate-integration-key. Nothing was changed.';

const KEY_MISSING =
  'The API Access Key is missing. Create one on the API Access page of your Svix dashboard, then either run ' +
  '`export SVIX_API_KEY=` followed by the key and run the set-up again, or run the set-up in a terminal, ' +
  'where it asks for the key.';

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  /**
   * Asks for the key without showing what is typed: given only when the set-up
   * runs in a terminal (without one, a missing key is an error).
   */
  askKey?: () => Promise<string>;
}

/** The key: from the environment, or asked for in a terminal; '' when there is none. */
const readKey = async (given: string | undefined, io: CliIo): Promise<string> => {
  const fromEnv = (given ?? io.env.SVIX_API_KEY ?? io.env.PROVIDER_API_KEY ?? '').trim();
  if (fromEnv !== '' || io.askKey === undefined) return fromEnv;
  return (await io.askKey()).trim();
};

/** Runs the set-up command; returns the process exit code. */
export const main = async (argv: string[], io: CliIo): Promise<number> => {
  let values: ReturnType<typeof parseOptions>['values'];
  try {
    ({ values } = parseOptions(argv));
  } catch (error) {
    io.err(`${commandLineAdvice(error, 'The set-up', 'npm run setup', argv, OPTION_NAMES, io.env)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  let apiKey: string;
  try {
    apiKey = await readKey(values['api-key'], io);
  } catch (error) {
    if (!(error instanceof QuestionStopped)) throw error;
    io.err('The set-up stopped before it was given a key: nothing was changed.');
    return 2;
  }
  if (apiKey === '') {
    const took = optionsNpmTook(OPTION_NAMES, io.env);
    const npmTookIt = took.length > 0 ? ` ${npmHint('npm run setup', took)}` : '';
    io.err(`${KEY_MISSING}${npmTookIt}\n\n${USAGE}`);
    return 2;
  }
  if (isIntegrationKey(apiKey)) {
    io.err(INTEGRATION_KEY_GIVEN);
    return 2;
  }
  const server = serverUrlFor(apiKey, values['server-url'], 'setup');
  if (!server.ok) {
    io.err(server.problem);
    return 2;
  }
  if (values['endpoint-url'] !== undefined && !/^https?:\/\/\S+$/.test(values['endpoint-url'])) {
    io.err(
      'The endpoint URL must be a web address starting with https:// (or http:// for a receiver on this computer).',
    );
    return 2;
  }
  const appId = values['app-id']?.trim();
  if (appId !== undefined && (!isAppId(appId) || values['app-name'] !== undefined)) {
    io.err(
      `Give --app-id as the Consumer App ID (app_ followed by 27 letters or digits), without --app-name.\n\n${USAGE}`,
    );
    return 2;
  }
  io.out(`Using Svix at ${server.url}`);
  if (values['integration-key'] && values['rotate-integration-key']) {
    io.err(
      `Give --integration-key (make the key for Zapier, once) or --rotate-integration-key (replace it), not both.\n\n${USAGE}`,
    );
    return 2;
  }
  const integrationKey = values['rotate-integration-key'] ? 'rotate' : values['integration-key'] ? 'ensure' : undefined;
  try {
    const result = await runSetup({
      client: new SvixClient({ baseUrl: server.url, apiKey }),
      ...(values['app-name'] ? { appName: values['app-name'] } : {}),
      ...(appId ? { appId } : {}),
      ...(values['endpoint-url'] ? { endpointUrl: values['endpoint-url'] } : {}),
      ...(integrationKey ? { integrationKey } : {}),
      say: io.out,
    });
    io.out('');
    io.out(`Consumer App ID: ${result.appId}`);
    if (result.endpointId) io.out(`Endpoint ID: ${result.endpointId}`);
    io.out('');
    // An app used as it was may already be the one the auction service sends to: nothing to send then.
    io.out(
      result.appCreated
        ? "Next: send the auction service's support team two things, so it can send your auction events:"
        : 'If the auction service does not send to this Consumer App yet, send its support team two things:',
    );
    io.out(`  1. the Consumer App ID: ${result.appId}`);
    io.out(
      '  2. an API Access Key for them. Create a separate one on the API Access page of the Svix dashboard, named for the auction service, so you can revoke it without touching anything else; send it through a secure channel. (Your key is never shown here.)',
    );
    io.out('');
    for (const line of zapierKeyLines(result.integrationKey, result.appId, server.url)) io.out(line);
    return 0;
  } catch (error) {
    if (error instanceof AppNotChosen) {
      io.err(appNotChosenLines(error).join('\n'));
      return 2;
    }
    if (error instanceof SvixFailure) {
      // Worded for the terminal (see Reader in svix/failures.ts).
      io.err(`Set-up stopped: ${error.message}`);
      // What Svix answered (its status, a header, the host), for whoever maintains the integration.
      if (error.failure.log) io.err(`  (${error.failure.log})`);
      return 1;
    }
    throw error;
  }
};

/** Several Consumer Apps, none chosen: which there are, and how to choose. */
const appNotChosenLines = ({ apps, more }: AppNotChosen): string[] => [
  'Run the set-up again with --app-id and the ID of the Consumer App the auction service sends to (or with',
  '--app-name NAME to make a new one): this environment has several, so the set-up chose none and changed nothing.',
  ...apps.map((app) => `  ${app.id}  ${app.name}`),
  ...(more ? ["  … and more: see Consumer Applications in Svix's dashboard."] : []),
];

/**
 * What to connect Zapier with, as the set-up's run left it: the key, the Consumer App ID and, where Zapier would not
 * find Svix from the key alone (a self-hosted Svix, an address given with --server-url), the Server URL.
 */
const zapierKeyLines = (outcome: IntegrationKeyOutcome | undefined, appId: string, serverUrl: string): string[] => {
  const field = `"${API_KEY_LABEL}"`;
  const key = outcome?.kind === 'created' || outcome?.kind === 'rotated' ? outcome.key : '';
  const found = serverUrlFor(key, undefined);
  const server =
    found.ok && found.url === serverUrl
      ? []
      : [`Also give Zapier's "Server URL" field ${serverUrl}: this Svix is not at the address the key implies.`];
  if (outcome === undefined) {
    return [
      `Then connect Zapier with the Consumer App ID and a key in the ${field} field.`,
      'Recommended: an integration key, which works only in this Consumer App and can be replaced without touching anything else: run the set-up again with --integration-key to make one.',
      'An API Access Key of your Svix account also works.',
      ...server,
    ];
  }
  if (outcome.kind === 'kept') {
    return [
      'The integration key for Zapier was made on an earlier run.',
      'Svix shows a key only once, when it is made, so it cannot be printed again: if you saved it, use it.',
      'If you did not (or that run stopped before printing it), run the set-up again with --rotate-integration-key for a new one; Zapier connections that use the old key must then be reconnected.',
      ...server,
    ];
  }
  return [
    'Integration key for Zapier (shown only this once: copy it now):',
    `  ${outcome.key}`,
    `Paste it into the ${field} field when you connect Zapier, with the Consumer App ID ${appId}.`,
    'If someone else builds the Zaps, send it to them through a secure channel (a password manager, not email or chat).',
    ...server,
    ...(outcome.kind === 'rotated'
      ? [
          'The previous integration key no longer works: reconnect every Zapier connection that used it (in Zapier, open App Connections, find the connection, choose Reconnect and paste the new key).',
        ]
      : []),
  ];
};

if (require.main === module) {
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    ...(process.stdin.isTTY
      ? {
          askKey: () =>
            askHidden('API Access Key of your Svix account (not shown as you type): ', process.stdin, process.stderr),
        }
      : {}),
  };
  runCommand(() => main(process.argv.slice(2), io), 'Set-up failed unexpectedly');
}
