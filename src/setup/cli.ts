import { parseArgs } from 'node:util';
import { runCommand } from '../cli/runCommand';
import { serverUrlFor } from '../provider/serverUrl';
import { ProviderClient, ProviderFailure } from './client';
import { DEFAULT_APP_NAME, runSetup } from './setup';

const USAGE = `Set up your Consumer App to receive the auction service's AUCTION_STATUS_CHANGE events.

Usage: npm run setup -- --api-key KEY [--server-url URL] [--app-name NAME] [--endpoint-url URL]

  --api-key KEY       your provider API Access Key (or set PROVIDER_API_KEY instead)
  --server-url URL    the provider's API address (default: from the key's region)
  --app-name NAME     the Consumer App's name (default: "${DEFAULT_APP_NAME}")
  --endpoint-url URL  also add an endpoint for a receiver that is not Zapier

Running it again changes nothing: it reuses what it made before.`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
}

/** Runs the set-up command; returns the process exit code. */
export const main = async (argv: string[], io: CliIo): Promise<number> => {
  let values: {
    'api-key'?: string;
    'server-url'?: string;
    'app-name'?: string;
    'endpoint-url'?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'api-key': { type: 'string' },
        'server-url': { type: 'string' },
        'app-name': { type: 'string' },
        'endpoint-url': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const apiKey = (values['api-key'] ?? io.env.PROVIDER_API_KEY ?? '').trim();
  if (apiKey === '') {
    io.err(
      `The API Access Key is missing: pass --api-key (create one under API Access in your provider account).\n\n${USAGE}`,
    );
    return 2;
  }
  const server = serverUrlFor(apiKey, values['server-url']);
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
  io.out(`Using the provider at ${server.url}`);
  try {
    const result = await runSetup({
      client: new ProviderClient({ baseUrl: server.url, apiKey }),
      ...(values['app-name'] ? { appName: values['app-name'] } : {}),
      ...(values['endpoint-url'] ? { endpointUrl: values['endpoint-url'] } : {}),
      say: io.out,
    });
    io.out('');
    io.out(`Consumer App ID: ${result.appId}`);
    if (result.endpointId) io.out(`Endpoint ID: ${result.endpointId}`);
    io.out('');
    io.out("Next: send the auction service's support team these two things, so it can send your auction events:");
    io.out(`  1. the Consumer App ID: ${result.appId}`);
    io.out('  2. your API Access Key: the key you just used (it is not shown here; send it through a secure channel).');
    io.out('Then connect Zapier with the same API Access Key and Consumer App ID.');
    return 0;
  } catch (error) {
    if (error instanceof ProviderFailure) {
      // The shared messages speak of Zapier's "reconnect"; here the person reruns the command.
      const message =
        error.failure.kind === 'auth'
          ? 'The provider did not accept the API Access Key (401). Check that you copied the whole key, or create a new one under API Access in your provider account, then run the set-up again.'
          : error.message;
      io.err(`Set-up stopped: ${message}`);
      return 1;
    }
    throw error;
  }
};

if (require.main === module) {
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  };
  runCommand(() => main(process.argv.slice(2), io), 'Set-up failed unexpectedly');
}
