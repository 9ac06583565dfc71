import { parseArgs } from 'node:util';
import { runCommand } from '../cli/runCommand';
import { ProviderEmulator } from './emulator';
import { runStory, summaryLine } from './story';

const USAGE = `Usage:
  npm start                         run the whole story offline (emulator, set-up, a Zap, auctions)
  npm start -- --events N           the same with N auction events (default 12)
  npm start -- --serve --port P --api-key K
                                    run only the provider emulator on 127.0.0.1:P until stopped`;

const positiveInteger = (text: string | undefined, fallback: number, max: number): number | undefined => {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 && value <= max ? value : undefined;
};

export const main = async (argv: string[]): Promise<number> => {
  let values: { events?: string; serve?: boolean; port?: string; 'api-key'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        events: { type: 'string' },
        serve: { type: 'boolean' },
        port: { type: 'string' },
        'api-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.serve) {
    const port = positiveInteger(values.port, 8071, 65535);
    const apiKey = values['api-key']?.trim();
    if (port === undefined || !apiKey) {
      process.stderr.write(`--serve needs --port (1 to 65535) and --api-key.\n${USAGE}\n`);
      return 2;
    }
    const emulator = new ProviderEmulator({ apiKey, port });
    const url = await emulator.start();
    process.stdout.write(`listening on ${url}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await emulator.stop();
    return 0;
  }
  const events = positiveInteger(values.events, 12, 100_000);
  if (events === undefined) {
    process.stderr.write(`--events takes a whole number from 1 to 100000.\n${USAGE}\n`);
    return 2;
  }
  const summary = await runStory({ events, say: (line) => process.stdout.write(`${line}\n`) });
  process.stdout.write(`${summaryLine(summary)}\n`);
  const healthy = summary.doubled === 0 && summary.failed === 0 && summary.lost === 0 && summary.endpointsLeft === 0;
  return healthy ? 0 : 1;
};

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The sandbox stopped');
