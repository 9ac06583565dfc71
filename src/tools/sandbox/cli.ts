import { parseArgs } from 'node:util';
import { commandLineAdvice, npmHint, optionsNpmTook, type Env } from '../cli/npmOptions';
import { runCommand } from '../cli/runCommand';
import { SvixClient } from '../setup/client';
import { runSetup } from '../setup/setup';
import { AuctionService } from './auctions';
import { burstLine, runBurst } from './burst';
import { PACE_PER_SECOND } from '../../limits';
import { SvixEmulator } from './emulator';
import { runStory, summaryLine } from './story';
import { runZapLife, zapLifeLine } from './zapLifeStory';

/** What `--serve` listens with unless told otherwise: what .env.example says. */
export const SERVE_DEFAULTS = { port: 8071, apiKey: 'testsk_local' };

/** The sandbox's Consumer App, the same every time, so a .env made once keeps working. */
export const SANDBOX_APP_ID = 'app_2pSandboxLocalConsumerApp01';

const USAGE = `Usage:
  npm start                         run the whole story offline (emulator, set-up, a Zap, auctions)
  npm start -- --events N           the same with N auction events (default 12)
  npm start -- --archived           the same with AUCTION_STATUS_CHANGE archived after the set-up: what a Zap
                                    with the integration key reads, then the Zap turned on (its subscribe
                                    un-archives it with the API Access Key)
  npm start -- --edits              a Zap's life: edited while events flow (in both orders Zapier may run an
                                    edit), then off, events sent, and on again catching up what it missed;
                                    each event runs once
  npm start -- --serve [--port P] [--api-key K]
                                    run the Svix emulator on 127.0.0.1:P (default ${SERVE_DEFAULTS.port}) until
                                    stopped, with the sandbox's Consumer App and a few auction events in it,
                                    for zapier-platform invoke (key K, default ${SERVE_DEFAULTS.apiKey})
  npm start -- --burst N [--zaps Z] [--unpaced]
                                    N auction events at once to Z Zaps (default 1), whose endpoints Svix paces
                                    at 25 a second together (or not, with --unpaced, as the open-source
                                    server): how many Zapier refused past its limits (30 a second for one
                                    hook, 10,000 in 5 minutes for one person), and whether each event ran
                                    once in each Zap`;

const positiveInteger = (text: string | undefined, fallback: number, max: number): number | undefined => {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 && value <= max ? value : undefined;
};

/**
 * The Svix emulator, with the sandbox's Consumer App set up as
 * `npm run setup` does and a few auction events in its message log, until
 * stopped: what `zapier-platform invoke` (auth test, trigger) talks to.
 */
const serve = async (port: number, apiKey: string, say: (line: string) => void): Promise<number> => {
  const emulator = new SvixEmulator({ apiKey, port, appIds: [SANDBOX_APP_ID] });
  const url = await emulator.start();
  say(`Svix emulator listening on ${url}: Zapier's CLI and the set-up call it there (Ctrl+C stops it).`);
  const client = new SvixClient({ baseUrl: url, apiKey });
  const { appId } = await runSetup({ client, appName: 'Sandbox Auction House' });
  const auctionService = new AuctionService(client, appId);
  for (let index = 0; index < 4; index += 1) await auctionService.emitNext(3);
  say(
    `Consumer App ${appId}, with ${auctionService.emitted.length} auction events. For zapier-platform invoke, copy .env.example to .env (once); it holds:`,
  );
  say(`  authData_apiKey=${apiKey === SERVE_DEFAULTS.apiKey ? apiKey : '(the --api-key given)'}`);
  say(`  authData_appId=${appId}`);
  say(`  authData_serverUrl=${url}`);
  say('Stop with Ctrl+C.');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    // Kept (not once): Ctrl+C reaches node twice, from the terminal and forwarded by npm.
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await emulator.stop();
  return 0;
};

const OPTIONS = {
  events: { type: 'string' },
  serve: { type: 'boolean' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  burst: { type: 'string' },
  zaps: { type: 'string' },
  unpaced: { type: 'boolean' },
  archived: { type: 'boolean' },
  edits: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the sandbox; `env` is where npm leaves the options it took for itself. */
export const main = async (argv: string[], env: Env = process.env): Promise<number> => {
  let values: {
    events?: string;
    serve?: boolean;
    port?: string;
    'api-key'?: string;
    burst?: string;
    zaps?: string;
    unpaced?: boolean;
    archived?: boolean;
    edits?: boolean;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true }));
  } catch (error) {
    process.stderr.write(
      `${commandLineAdvice(error, 'npm start', 'npm start', argv, Object.keys(OPTIONS), env)}\n${USAGE}\n`,
    );
    return 2;
  }
  // `npm start --serve`: npm took every option, and the whole story would run instead of what was asked.
  const took = optionsNpmTook(Object.keys(OPTIONS), env);
  if (argv.length === 0 && took.length > 0) {
    process.stderr.write(`npm start was given nothing: ${npmHint('npm start', took)}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.serve) {
    const port = positiveInteger(values.port, SERVE_DEFAULTS.port, 65535);
    const apiKey = (values['api-key'] ?? SERVE_DEFAULTS.apiKey).trim();
    if (port === undefined || !apiKey) {
      process.stderr.write(`--serve takes --port (1 to 65535) and a non-empty --api-key.\n${USAGE}\n`);
      return 2;
    }
    return serve(port, apiKey, (line) => process.stdout.write(`${line}\n`));
  }
  if (values.burst !== undefined) {
    const burst = positiveInteger(values.burst, 300, 10_000);
    const zaps = positiveInteger(values.zaps, 1, 25);
    if (burst === undefined || zaps === undefined) {
      process.stderr.write(`--burst takes a whole number from 1 to 10000, --zaps one from 1 to 25.\n${USAGE}\n`);
      return 2;
    }
    const runs = burst * zaps;
    const paced = values.unpaced !== true;
    const say = (line: string) => process.stdout.write(`${line}\n`);
    say(
      paced
        ? `Sending ${burst} events at once to ${zaps} Zap(s): ${runs} Zap runs. Svix paces your Zaps at ${PACE_PER_SECOND} deliveries a second together, under the 30 Zapier takes from one hook, so they take about ${Math.ceil(runs / PACE_PER_SECOND)} s…`
        : `Sending ${burst} events at once to ${zaps} Zap(s) without pacing: Zapier refuses past 30 a second for one hook (an answer 429), and Svix retries each refused delivery later…`,
    );
    const result = await runBurst({ events: burst, zaps, paced, say });
    const fine = result.lost === 0 && result.doubled === 0;
    say(
      `      Zapier's refusals (zapier_429 below): ${result.hookLimitAnswers}, each retried by Svix on its schedule (5 s, then 5 minutes…, a thousand times faster here).`,
    );
    say(verdict(fine, 'every event ran once in every Zap'));
    process.stdout.write(`${burstLine(result)}\n`);
    return fine ? 0 : 1;
  }
  if (values.edits) {
    const summary = await runZapLife((line) => process.stdout.write(`${line}\n`));
    const fine = summary.lost === 0 && summary.doubled === 0 && summary.endpointsLeft === 0;
    process.stdout.write(`${verdict(fine, 'across both edits and off and on, every event ran once')}\n`);
    process.stdout.write(`${zapLifeLine(summary)}\n`);
    return fine ? 0 : 1;
  }
  const events = positiveInteger(values.events, 12, 100_000);
  if (events === undefined) {
    process.stderr.write(`--events takes a whole number from 1 to 100000.\n${USAGE}\n`);
    return 2;
  }
  const summary = await runStory({
    events,
    say: (line) => process.stdout.write(`${line}\n`),
    archived: values.archived === true,
  });
  const healthy = summary.doubled === 0 && summary.failed === 0 && summary.lost === 0 && summary.endpointsLeft === 0;
  const said = 'each event the Zap wants ran once, the forged one was refused, and turning it off left nothing live';
  // The verdict in words, then the summary a script reads, last.
  process.stdout.write(`${verdict(healthy, said)}\n`);
  process.stdout.write(`${summaryLine(summary)}\n`);
  return healthy ? 0 : 1;
};

/** A story's verdict, in words, before its summary line (the counts, for a script). */
const verdict = (fine: boolean, what: string): string =>
  fine ? `It works: ${what}.` : 'Something is wrong: lost, doubled, failed and endpoints_left above should all be 0.';

if (require.main === module) runCommand(() => main(process.argv.slice(2)), 'The sandbox stopped');
