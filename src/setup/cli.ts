import { parseArgs } from 'node:util';
import { runCommand } from '../cli/runCommand';
import { serverUrlFor } from '../provider/serverUrl';
import { ProviderClient, ProviderFailure } from './client';
import { API_KEY_LABEL } from '../authentication';
import type { IntegrationKeyOutcome } from './integrationKey';
import { DEFAULT_APP_NAME, runSetup } from './setup';

const USAGE = `Set up your Consumer App to receive the auction service's AUCTION_STATUS_CHANGE events.

Usage: npm run setup -- --api-key KEY [--server-url URL] [--app-name NAME] [--endpoint-url URL]
                        [--integration-key | --rotate-integration-key]

  --api-key KEY               your Svix account's API Access Key (or set PROVIDER_API_KEY instead)
  --server-url URL            Svix's API address (default: from the key's region)
  --app-name NAME             the Consumer App's name (default: "${DEFAULT_APP_NAME}")
  --endpoint-url URL          also add an endpoint for a receiver that is not Zapier
  --integration-key           also make the key to connect Zapier with: an integration key that works
                              only in this Consumer App (printed once, the first time)
  --rotate-integration-key    replace that key; Zapier connections using the old one must be reconnected
                              (one or the other: the first makes the key once, the second replaces it)

Running it again changes nothing: it reuses what it made before.`;

/** The set-up's options, as parseArgs takes them. */
const OPTIONS = {
  'api-key': { type: 'string' },
  'server-url': { type: 'string' },
  'app-name': { type: 'string' },
  'endpoint-url': { type: 'string' },
  'integration-key': { type: 'boolean' },
  'rotate-integration-key': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The command line read with OPTIONS; throws (with a `code`) on what the set-up does not take. */
const parseOptions = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, strict: true });

const NPM_HINT =
  'If you ran `npm run setup --api-key …`, npm kept the options for itself: put -- before them, as in `npm run setup -- --api-key …`.';

/** Options npm took for itself (`npm run setup --api-key …` without `--`): it hands them over as npm_config_* variables. */
const optionsNpmTook = (env: CliIo['env']): string[] =>
  Object.keys(OPTIONS)
    .filter((name) => env[`npm_config_${name.replace(/-/g, '_')}`] !== undefined)
    .map((name) => `--${name}`);

/**
 * What was wrong with the command line, in words of the set-up's own: never
 * what was typed, which may well be the key (a value whose option npm took,
 * left behind as a stray argument).
 */
const commandLineProblem = (error: unknown, env: CliIo['env']): string => {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const problem =
    code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
      ? 'The set-up was given something that is not one of its options (not shown here, in case it is your key).'
      : code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? 'The set-up was given an option it does not know (not shown here, in case it holds your key).'
        : code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
          ? 'An option of the set-up was given without its value, or with a value it does not take.'
          : 'The set-up could not read its options.';
  const took = optionsNpmTook(env);
  const npm = took.length > 0 ? ` npm took ${took.join(', ')} for itself.` : '';
  return `${problem}${npm} ${NPM_HINT}`;
};

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
}

/** Runs the set-up command; returns the process exit code. */
export const main = async (argv: string[], io: CliIo): Promise<number> => {
  let values: ReturnType<typeof parseOptions>['values'];
  try {
    ({ values } = parseOptions(argv));
  } catch (error) {
    io.err(`${commandLineProblem(error, io.env)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const apiKey = (values['api-key'] ?? io.env.PROVIDER_API_KEY ?? '').trim();
  if (apiKey === '') {
    const npmTookIt = optionsNpmTook(io.env).length > 0 ? ` ${NPM_HINT}` : '';
    io.err(
      `The API Access Key is missing: pass --api-key (create one on the API Access page of Svix's dashboard).${npmTookIt}\n\n${USAGE}`,
    );
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
      client: new ProviderClient({ baseUrl: server.url, apiKey }),
      ...(values['app-name'] ? { appName: values['app-name'] } : {}),
      ...(values['endpoint-url'] ? { endpointUrl: values['endpoint-url'] } : {}),
      ...(integrationKey ? { integrationKey } : {}),
      say: io.out,
    });
    io.out('');
    io.out(`Consumer App ID: ${result.appId}`);
    if (result.endpointId) io.out(`Endpoint ID: ${result.endpointId}`);
    io.out('');
    io.out("Next: send the auction service's support team two things, so it can send your auction events:");
    io.out(`  1. the Consumer App ID: ${result.appId}`);
    io.out(
      '  2. an API Access Key for them. Create a separate one on the API Access page of the Svix dashboard, named for the auction service, so you can revoke it without touching anything else; send it through a secure channel. (Your key is never shown here.)',
    );
    io.out('');
    for (const line of zapierKeyLines(result.integrationKey, result.appId)) io.out(line);
    return 0;
  } catch (error) {
    if (error instanceof ProviderFailure) {
      // Worded for the terminal (see Reader in provider/failures.ts).
      io.err(`Set-up stopped: ${error.message}`);
      return 1;
    }
    throw error;
  }
};

/** What to connect Zapier with, as the set-up's run left it. */
const zapierKeyLines = (outcome: IntegrationKeyOutcome | undefined, appId: string): string[] => {
  const field = `"${API_KEY_LABEL}"`;
  if (outcome === undefined) {
    return [
      `Then connect Zapier with the Consumer App ID and a key in the ${field} field. Recommended: an integration key,`,
      'which works only in this Consumer App and can be replaced without touching anything else: run the set-up again',
      'with --integration-key to make one. An API Access Key of your Svix account also works.',
    ];
  }
  if (outcome.kind === 'kept') {
    return [
      'The integration key for Zapier was made on an earlier run. Svix shows a key only once, when it is made,',
      'so it cannot be printed again: if you saved it, use it. If you did not (or that run stopped before printing it),',
      'run the set-up again with --rotate-integration-key for a new one; Zapier connections that use the old key must',
      'then be reconnected.',
    ];
  }
  return [
    'Integration key for Zapier (shown only this once: copy it now):',
    `  ${outcome.key}`,
    `Paste it into the ${field} field when you connect Zapier, with the Consumer App ID ${appId}.`,
    ...(outcome.kind === 'rotated'
      ? [
          'The previous integration key no longer works: reconnect every Zapier connection that used it',
          '(in Zapier, open My Apps, find the connection, choose Reconnect and paste the new key).',
        ]
      : []),
  ];
};

if (require.main === module) {
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  };
  runCommand(() => main(process.argv.slice(2), io), 'Set-up failed unexpectedly');
}
