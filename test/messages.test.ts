import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import app from '../src';
import type { Halt } from '../src/delivery/verify';
import { authentication } from '../src/authentication';
import { EVENT_TYPE_ARCHIVED, EVENT_TYPE_NOT_PERMITTED, THIS_ZAP_DISABLED } from '../src/zap/endpoint';
import { ACTIONS, appNotFound, ENDPOINT_MESSAGES } from '../src/svix/api';
import { ACCESS_ACTIONS, ACCESS_MESSAGES } from '../src/zap/access';
import { EVENT_TYPE_ACTIONS } from '../src/svix/eventType';
import { readConnection, APP_ID_HELP } from '../src/svix/connection';
import {
  describeNotJson,
  describeStatus,
  describeUnexpectedShape,
  describeUnreachable,
  READERS,
  type Reader,
} from '../src/svix/failures';
import { type Failure } from '../src/zapier/io';
import { checkServerUrl } from '../src/svix/serverUrl';
import { decodePayload, parseBody } from '../src/fields/payload';
import {
  couldNotCheck,
  haltMessage,
  couldNotConfirm,
  couldNotRead,
  skippedMessage,
  MESSAGES,
  RECORD_REFUSALS,
  refusalMessage,
  unreadableFilter,
  type DeliveryRefusal,
} from '../src/messages';
import { FILTER_LABELS, type FilterField } from '../src/fields/filters';
import { NO_TIME } from '../src/fields/recentItems';
import { API_KEY } from './helpers/fixtures';
import { unreadable, ZAPIER_LIMIT } from './helpers/readable';

/**
 * Every message, rendered in each place it can be read: in Zapier (the Zap
 * editor, a Zap run's history) it says what to do in Zapier or whom to ask,
 * and never mentions npm or a terminal; from the set-up it says what to run;
 * a message promises a retry only where something retries.
 */

const STATUSES = [400, 401, 403, 404, 409, 413, 418, 422, 429, 500, 502, 503];
const MESSAGE_ID = 'msg_2pQ7uTnVw9XyZa1Bc3De5Fg7Aa1';
const CAUSES: unknown[] = [
  { type: 'request-timeout' },
  { code: 'ECONNREFUSED' },
  { code: 'ENOTFOUND' },
  new Error('socket hang up'),
];
const BODY_422 = { detail: [{ loc: ['body', 'url'], msg: 'invalid', type: 'value_error' }] };

/** Every phrase an operation's messages name what it was doing with. */
const EVERY_ACTION = [
  ...Object.values(ACTIONS),
  ...Object.values(ACCESS_ACTIONS),
  // Updating the event type's schema is the set-up's alone.
  EVENT_TYPE_ACTIONS.read,
  EVENT_TYPE_ACTIONS.register,
  EVENT_TYPE_ACTIONS.unarchive,
];
/** The longest: messages are checked against the limit with it. */
const LONGEST_ACTION = EVERY_ACTION.reduce((a, b) => (b.length > a.length ? b : a));
/** A Server URL as long as a person may type one: it reaches only the log. */
const LONG_ORIGIN = `https://${'svix-self-hosted.'.repeat(6)}example.com`;

/** Every Svix failure for one reader, doing `action`: each status, each shape of answer, each way a call fails. */
const svixFailures = (reader: Reader, action = 'doing it'): Failure[] => [
  ...STATUSES.map((status) =>
    describeStatus(status, status === 422 ? BODY_422 : { code: 'x', detail: 'x' }, { action, reader }, '120'),
  ),
  describeStatus(429, {}, { action, reader }),
  describeStatus(429, {}, { action, reader }, '1'),
  describeNotJson(action, reader),
  describeUnexpectedShape(action, ['ApplicationOut.name: expected text'], reader),
  ...CAUSES.map((cause) => describeUnreachable(action, LONG_ORIGIN, cause, reader)),
];

/** Every Svix failure message for one reader. */
const svixMessages = (reader: Reader, action?: string): string[] =>
  svixFailures(reader, action).map((failure) => failure.message);

const FILTER_FIELDS: FilterField[] = ['statuses', 'auctioneerUuid', 'skipOutdated', 'catchUp', 'showSkipped'];

const REFUSALS: DeliveryRefusal[] = [
  'no-delivery',
  'event-too-old',
  'no-body',
  'missing-headers',
  'bad-timestamp',
  'too-old',
  'too-new',
  'no-valid-signature',
];

const connectionMessages = [
  { apiKey: '', appId: 'app_x' },
  { apiKey: 'k', appId: 'not-an-app-id' },
  { apiKey: 'k', appId: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', serverUrl: 'not a url' },
  { apiKey: 'k', appId: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', serverUrl: 'http://example.com' },
  { apiKey: 'k', appId: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', serverUrl: 'https://u:p@example.com' },
  { apiKey: 'k', appId: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', serverUrl: 'ftp://example.com' },
].map((authData) => {
  const result = readConnection(authData);
  return result.ok ? '' : result.message;
});

/** Everything a person may read in Zapier, from the app's own wording: each failure kind in each operation. */
const zapierMessages = async (): Promise<string[]> => {
  const invalid = await decodePayload({ status: 1 });
  const inZapier = READERS.filter((reader) => reader !== 'setup');
  const notJson = parseBody('<html>');
  const connection = { apiKey: API_KEY, appId: 'app_2pQ7uTnVw9XyZa1Bc3De5Fg7Hi9', baseUrl: 'https://api.svix.com' };
  return [
    ...inZapier.flatMap((reader) => EVERY_ACTION.flatMap((action) => svixMessages(reader, action))),
    ...Object.values(ACCESS_MESSAGES),
    couldNotCheck(MESSAGE_ID).message,
    ...REFUSALS.map(refusalMessage),
    ...FILTER_FIELDS.map(unreadableFilter),
    ...(['statuses', 'auctioneerUuid', 'skipOutdated'] as const).map((by) => skippedMessage(by, 'X'.repeat(40))),
    ...Object.values(MESSAGES),
    ...Object.values(ENDPOINT_MESSAGES),
    EVENT_TYPE_NOT_PERMITTED,
    EVENT_TYPE_ARCHIVED,
    THIS_ZAP_DISABLED,
    appNotFound(connection),
    appNotFound({ ...connection, apiKey: 'integsk_abc' }),
    APP_ID_HELP,
    NO_TIME,
    ...connectionMessages,
    invalid.ok ? '' : invalid.message,
    notJson.ok ? '' : notJson.message,
    ...recordMessages(),
  ];
};

/** Every halt of the delivery path: a record of them all, so that a new halt does not compile until it is here. */
const EVERY_HALT: Record<Halt, null> = {
  ...{ 'not-a-svix-id': null, 'not-confirmed': null, 'before-endpoint': null },
  ...{ expired: null, gone: null },
};
const HALTS = Object.keys(EVERY_HALT).filter((why): why is Halt => Object.hasOwn(EVERY_HALT, why));
/** Why the events a Zap missed while off were not sent again. */

/** What a delivery checked against Svix's record can say: halts, and each failure to read it. */
const recordMessages = (): string[] => [
  ...HALTS.map((why) => haltMessage(why)),
  ...svixFailures('zap-run', LONGEST_ACTION).map((failure) => couldNotConfirm(MESSAGE_ID)(failure).message),
  ...svixFailures('zap-run', LONGEST_ACTION).map((failure) => couldNotRead(MESSAGE_ID)(failure).message),
];

const TERMINAL = /\bnpm\b|terminal|command line|--[a-z]|\brun the set-up again\b/i;

/** The help texts Zapier shows beside the connection's fields and the trigger's options. */
const helpTexts = (): string[] => {
  const definition: unknown = JSON.parse(JSON.stringify(app));
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if ((key === 'helpText' || key === 'description') && typeof child === 'string') texts.push(child);
        else walk(child);
      }
    }
  };
  walk(definition);
  return texts;
};

describe('every message a person reads in Zapier', () => {
  it(`fits in the ${ZAPIER_LIMIT} characters Zapier shows, what to do first, with no status, header, key or needless ID`, async () => {
    const messages = await zapierMessages();
    expect(messages.length).toBeGreaterThan(400);
    expect(unreadable(messages)).toEqual([]);
  });

  it('the check itself catches each rule it states', () => {
    expect(unreadable(['Svix is down (503). Try again later.'])).toHaveLength(1);
    expect(unreadable([`Try again: ${'x'.repeat(ZAPIER_LIMIT)}.`])).toHaveLength(1);
    expect(unreadable(['Try again: the svix-signature header was missing.'])).toHaveLength(1);
    expect(unreadable([`Nothing to do: ${MESSAGE_ID} was refused.`])).toHaveLength(1);
    expect(unreadable([`Check the key: ${API_KEY} was refused.`])).toHaveLength(1);
    expect(unreadable(['Try again in about 120 seconds: Svix is limiting requests.'])).toEqual([]);
  });

  it('the connection fields: help of at most 300 characters, the key and app ID linking to their dashboard page', () => {
    const fields = authentication.fields;
    for (const field of fields) expect((field.helpText ?? '').length).toBeLessThanOrEqual(300);
    const help = (key: string) => fields.find((field) => field.key === key)?.helpText ?? '';
    expect(help('apiKey')).toContain('(https://dashboard.svix.com/api-access)');
    expect(help('appId')).toContain('(https://dashboard.svix.com/)');
    expect(help('serverUrl')).toMatch(/^Leave empty\. Only for a self-hosted Svix, or an address Svix gave you/);
  });
});

describe('messages, where they are read', () => {
  it('each has an entry in the guide that quotes its opening words, and each entry a message it quotes (#54)', async () => {
    const guide = readFileSync(resolve(__dirname, '..', 'docs', 'guide.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## When something goes wrong'));
    const openings = [...section.matchAll(/\*\*"([^"]+?)…"\*\*/g)].map(([, quoted]) =>
      (quoted ?? '').replace(/\s+/g, ' '),
    );
    expect(openings.length).toBeGreaterThan(15);
    const messages = await zapierMessages();
    const unquoted = messages.filter((message) => !openings.some((opening) => message.startsWith(opening)));
    expect(unquoted).toEqual([]);
    const stale = openings.filter((opening) => !messages.some((message) => message.startsWith(opening)));
    expect(stale).toEqual([]);
  });

  it("speaks of what a person knows, a Zap turned on or off and its link to Svix, never Svix's words for it (#61.7)", async () => {
    const words = /\bendpoints?\b|\bpark(ed|ing)?\b|\bpoint(ing)?\b|\bpacing\b/i;
    expect((await zapierMessages()).filter((message) => words.test(message))).toEqual([]);
  });

  it("gives one name to the person who owns the Consumer App, and the address of Svix's status page (#61.9)", async () => {
    const messages = await zapierMessages();
    expect(messages.filter((message) => /whoever owns/i.test(message))).toEqual([]);
    const statusPage = messages.filter((message) => /status page/.test(message));
    expect(statusPage.length).toBeGreaterThan(0);
    for (const message of statusPage) expect(message).toContain('status.svix.com');
  });

  it("names a skipped event's status only where it looks like one (#61.8)", () => {
    expect(skippedMessage('statuses', 'LOTS_SOLD')).toContain('(status LOTS_SOLD)');
    expect(skippedMessage('statuses', 'Sold out')).toContain('(status Sold out)');
    for (const odd of ['<b>CLOSED</b>', 'A'.repeat(41), 'CLOSED\nNothing', ''])
      expect(skippedMessage('statuses', odd)).not.toContain('(status');
  });

  it('has something to render', async () => {
    expect(FILTER_FIELDS).toEqual(Object.keys(FILTER_LABELS));
    expect((await zapierMessages()).length).toBeGreaterThan(60);
    expect((await zapierMessages()).every((message) => message.length > 30)).toBe(true);
  });

  it('in Zapier: what to do in Zapier, or whom to ask; never npm or a terminal', async () => {
    for (const message of await zapierMessages()) expect(message).not.toMatch(TERMINAL);
  });

  it('from the set-up: what to run, and nothing about reconnecting in Zapier', () => {
    for (const message of svixMessages('setup')) {
      expect(message).not.toMatch(/Zapier|Zap\b|reconnect/i);
    }
    // "Set-up" names the command: a Zapier-facing message does not use it for the person's configuration.
    for (const message of svixMessages('zap-editor')) expect(message).not.toMatch(/your set-up/i);
    const refused = describeStatus(401, {}, { action: 'x', reader: 'setup' }).message;
    expect(refused).toMatch(/run the set-up again/);
    for (const url of ['not a url', 'http://example.com', 'ftp://example.com']) {
      const checked = checkServerUrl(url, 'setup');
      expect(checked.ok ? '' : checked.problem).toMatch(/--server-url/);
    }
  });

  it('promises a retry only where something retries: nowhere does Zapier resend a delivery', async () => {
    for (const message of [...(await zapierMessages()), ...svixMessages('setup')]) {
      expect(message).not.toMatch(/Zapier will (try|retry)|will (be )?(tried|try) again/i);
    }
    // In a Zap run nothing can be tried again: nothing says to, and where a Svix call failed the
    // message says the event did not run.
    for (const message of svixMessages('zap-run')) expect(message).not.toMatch(/try again/i);
    for (const message of svixMessages('zap-run').filter((text) => /temporary|Could not reach/.test(text))) {
      expect(message).toMatch(/the Zap did not run\.$/);
    }
  });

  it("does not blame the sender's clock for a signing time out of the window", () => {
    for (const refusal of REFUSALS) expect(refusalMessage(refusal)).not.toMatch(/clock/i);
  });

  it('an event that was not checked names it and says how to send it again; a refusal of junk does not invite a resend', () => {
    for (const failure of svixFailures('zap-run')) {
      for (const message of [couldNotConfirm, couldNotRead].map((reword) => reword(MESSAGE_ID)(failure).message)) {
        expect(message).toContain(MESSAGE_ID);
        expect(message).toMatch(
          new RegExp(
            `^(Reconnect .*, then )?ask whoever set up your Consumer App to resend message ${MESSAGE_ID}`,
            'i',
          ),
        );
      }
    }
    expect(RECORD_REFUSALS.notConfirmed).not.toMatch(/resend/i);
    // The auction service cannot send an event again: an expired one names no message to resend (#54).
    expect(RECORD_REFUSALS.expired).not.toMatch(/msg_|send .* again/i);
  });

  it('in Zapier: names Svix where something is to be found, and one name for the auction service', async () => {
    const texts = [...(await zapierMessages()), ...helpTexts()];
    expect(helpTexts().length).toBeGreaterThan(5);
    for (const text of texts) {
      // "Svix" is a word a person cannot look up; Svix is.
      expect(text).not.toMatch(/\bprovider\b/i);
      expect(text).not.toMatch(/auction (platform|back-?end)/i);
    }
  });

  it("never sends the person building Zaps to Svix's dashboard, which they usually cannot open: they ask its owner", async () => {
    const messages = await zapierMessages();
    expect(messages.filter((message) => /dashboard/i.test(message))).toEqual([]);
    expect(messages.filter((message) => /whoever set up your Consumer App/.test(message)).length).toBeGreaterThan(20);
    // The help under the key and app ID fields links the pages, for whoever owns the account, after naming that person.
    for (const text of helpTexts().filter((help) => /dashboard\.svix\.com/.test(help))) {
      expect(text.indexOf('whoever set up your Consumer App')).toBeGreaterThanOrEqual(0);
      expect(text.indexOf('whoever set up your Consumer App')).toBeLessThan(text.indexOf('dashboard.svix.com'));
    }
  });

  it('says what happened in plain words: no signing times, endpoint secrets, bodies, field names or expected forms', async () => {
    // Each was in a message once (issue 47); "Svix's dashboard" is checked above.
    const JARGON = [
      /signing (time|secret)/i,
      /endpoint('s)? secret/i,
      /\bbody\b|had no body/i,
      /connection's fields/i,
      /\((url|name|uid|eventTypes|throttleRate)\)/,
      /expected form/i,
      /\bsubscription\b/i,
    ];
    const texts = [...(await zapierMessages()), ...helpTexts()];
    const found = texts.flatMap((text) =>
      JARGON.filter((word) => word.test(text)).map((word) => `${word.source}: ${text}`),
    );
    expect(found).toEqual([]);
    // The check catches what it names.
    expect(JARGON.filter((word) => word.test("a delivery's signing time had no body (url)")).length).toBe(3);
  });

  it('points only to people who exist: whoever set up the Consumer App, the auction service, or Svix', async () => {
    for (const text of [...(await zapierMessages()), ...helpTexts(), ...svixMessages('setup')]) {
      // No "contact this integration's support": there is no such contact.
      expect(text.replace(/the auction service's support team/g, '')).not.toMatch(/\bsupport\b/i);
    }
    // A Zap builder has no Svix account to ask about (#54): whoever set up the Consumer App does.
    for (const text of await zapierMessages()) expect(text).not.toMatch(/\b(ask|contact) Svix\b/i);
  });

  it("the key's help says what an integration key is, where it comes from, and which Svix environment to use", () => {
    const keyHelp = helpTexts().find((text) => text.includes('integration key')) ?? '';
    // It names the Consumer App's field without supposing it has been seen: the key's field comes first.
    expect(keyHelp).toMatch(/works only in the Consumer App named below/);
    expect(keyHelp).not.toMatch(/that one Consumer App/);
    expect(keyHelp).toMatch(/from whoever set up your Consumer App/);
    expect(keyHelp).toMatch(/environment \(usually \*\*Production\*\*\)/);
    expect(keyHelp).not.toMatch(/set-up printed/);
  });

  it('never carries a key', async () => {
    for (const message of await zapierMessages()) expect(message).not.toContain(API_KEY);
  });
});
