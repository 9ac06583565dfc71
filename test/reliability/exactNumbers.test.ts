import fc from 'fast-check';
import nock from 'nock';
import { humanise } from '../../src/fields/extraFields';
import { LosslessNumber } from 'lossless-json';
import { exactText, JsonTooDeep, MAX_JSON_DEPTH, parseJson } from '../../src/models/json';
import {
  APP_ID,
  ENDPOINT_ID,
  PROVIDER,
  authData,
  messageIdAt,
  newSecret,
  payload,
  signedRequest,
  failure,
  subscription,
} from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

/**
 * Numbers from outside reach a Zap exactly: an integer beyond ±2^53 (a Java
 * `long`) as its exact decimal text, and every number a double keeps as a
 * number. For the delivered body, the message log behind Test trigger, and
 * Svix's record of a message, alike.
 */

const zapier = usePlatform();
// A hundred invocations through core's handler: seconds on a busy machine, not a measure.
jest.setTimeout(60_000);

const AUCTIONEER_CLASS = 'com.vendor.scaffold.models.auctionapi.AuctioneerApiModel';
/** The body a Java service sends: `long` values as JSON numbers. */
const JAVA_BODY = `{"auctioneerUuid":"${payload.auctioneerUuid}","auctionUuid":"${payload.auctionUuid}","status":"OPEN_FOR_BIDDING","auctioneer":{"@class":"${AUCTIONEER_CLASS}","id":9007199254740993,"name":"Harbour"},"lotId":1234567890123456789}`;

/** A number parseJson keeps exact: still a number, holding its exact text. */
const exact = (text: string) => new LosslessNumber(text);

describe('parseJson', () => {
  it('keeps integers beyond ±2^53 exact, and every other number a number', () => {
    expect(
      parseJson(
        '{"a":9007199254740993,"b":-9007199254740993,"c":9007199254740991,"d":12345678901234567890123456789,"e":-0,"f":0.1,"g":3.141592653589793238,"h":1.5e3,"i":1e21}',
      ),
    ).toEqual({
      a: exact('9007199254740993'),
      b: exact('-9007199254740993'),
      c: 9007199254740991,
      d: exact('12345678901234567890123456789'),
      e: -0,
      f: 0.1,
      g: 3.141592653589793,
      h: 1500,
      i: 1e21,
    });
  });

  it('keeps a number too large or too small for a double exact, where JSON.parse gives Infinity or 0', () => {
    const read = parseJson('[1e400,-1e400,1e-400,1E+999]');
    expect(read).toEqual(['1e400', '-1e400', '1e-400', '1E+999'].map(exact));
    expect(Array.isArray(read) ? read.map(exactText) : []).toEqual(['1e400', '-1e400', '1e-400', '1E+999']);
    expect(exactText(1)).toBeUndefined();
    expect(exactText('9007199254740993')).toBeUndefined();
  });

  it('finds such numbers after whitespace, wherever JSON puts a number', () => {
    expect(parseJson(' 1e400')).toEqual(exact('1e400'));
    expect(parseJson('[ 9007199254740993,\n\t-1e400 ]')).toEqual([exact('9007199254740993'), exact('-1e400')]);
    expect(parseJson('{ "id": "msg_4e512", "n" :\r\n 12345678901234567890 }')).toEqual({
      id: 'msg_4e512',
      n: exact('12345678901234567890'),
    });
  });

  it('leaves keys, long digit strings and duplicate keys as JSON.parse does', () => {
    const text = '{"9007199254740993":1,"1e400":2,"s":"12345678901234567890","k":1,"k":9007199254740993}';
    expect(parseJson(text)).toEqual({
      '9007199254740993': 1,
      '1e400': 2,
      s: '12345678901234567890',
      k: exact('9007199254740993'),
    });
  });

  it('refuses what JSON.parse refuses; keeps numbers exact at every depth it reads, and refuses deeper', () => {
    for (const text of ['', '{', '{"a":01}', 'NaN', '\ufeff{}', '{"a":1} x'])
      expect(() => parseJson(text)).toThrow(SyntaxError);
    const nested = (depth: number) =>
      `{"lotId":9007199254740993,"x":${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}}`;
    expect(parseJson(nested(MAX_JSON_DEPTH))).toEqual(expect.objectContaining({ lotId: exact('9007199254740993') }));
    for (const depth of [MAX_JSON_DEPTH + 1, 5_000, 200_000])
      expect(() => parseJson(nested(depth))).toThrow(JsonTooDeep);
    // Brackets inside strings are text, not depth.
    expect(parseJson(`{"s":"${'['.repeat(5_000)}"}`)).toEqual({ s: '['.repeat(5_000) });
  });

  /** A JSON value built from raw number tokens, written as text, with what reading it must give. */
  type Built = { text: string; value: unknown };
  const exactValue = (token: string): number | LosslessNumber => {
    const asNumber = Number(token);
    if (!Number.isFinite(asNumber) || (asNumber === 0 && /[1-9]/.test(token.split(/[eE]/)[0] ?? '')))
      return exact(token);
    if (/^-?\d+$/.test(token) && !Number.isSafeInteger(asNumber)) return exact(token);
    return asNumber;
  };
  const numberToken = fc.oneof(
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
    fc.constantFrom('-0', '0', '1e400', '-1e400', '1e-400', '9007199254740993', '-9007199254740993'),
    fc.stringMatching(/^[1-9]\d{15,80}$/),
  );
  const built: fc.Arbitrary<Built> = fc.letrec<{ value: Built }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      numberToken.map((token) => ({ text: token, value: exactValue(token) })),
      fc.string().map((text) => ({ text: JSON.stringify(text), value: text })),
      fc.constantFrom(true, false, null).map((value) => ({ text: JSON.stringify(value), value })),
      fc.array(tie('value'), { maxLength: 4 }).map((items) => ({
        text: `[${items.map((item) => item.text).join(',')}]`,
        value: items.map((item) => item.value),
      })),
      fc
        .uniqueArray(fc.tuple(fc.oneof(fc.string(), numberToken), tie('value')), {
          maxLength: 4,
          selector: ([key]) => key,
        })
        .map((entries) => ({
          text: `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${item.text}`).join(',')}}`,
          value: Object.fromEntries(entries.map(([key, item]) => [key, item.value])),
        })),
    ),
  })).value;

  it('reads any JSON exactly: the same as JSON.parse, but for the numbers a double cannot keep', () => {
    fc.assert(
      fc.property(built, ({ text, value }) => {
        expect(parseJson(text)).toEqual(value);
      }),
      { numRuns: 1_000 },
    );
  });
});

const only = (result: unknown): Record<string, unknown> => {
  if (!Array.isArray(result) || result.length !== 1) throw new Error('expected one item');
  const [item]: unknown[] = result;
  if (typeof item !== 'object' || item === null) throw new Error('expected an item');
  return Object.fromEntries(Object.entries(item));
};

/** The Consumer App's message log, answered as Svix's raw JSON text (numbers as sent). */
const logAnswer = (messageId: string, payloadText: string) =>
  nock(PROVIDER)
    .get(`/api/v1/app/${APP_ID}/msg`)
    .query(true)
    .reply(
      200,
      `{"data":[{"id":"${messageId}","eventType":"AUCTION_STATUS_CHANGE","payload":${payloadText},"timestamp":"${new Date().toISOString()}"}],"iterator":null,"prevIterator":null,"done":true}`,
      { 'content-type': 'application/json' },
    );

describe('what a Zap receives', () => {
  const SECRET = newSecret();
  // Subscribed a minute ago: a secret read now is plainly later (within the clocks' skew, it would be read again).
  const zap = { ...subscription, secret: SECRET, checkedAt: Date.now() - 60_000 };
  const deliver = (body: string, messageId: string, secrets = [SECRET]) =>
    zapier().perform({
      authData,
      subscribeData: zap,
      rawRequest: signedRequest(body, { msgId: messageId, secrets }),
      inputData: {},
    });

  it("a Java service's longs arrive exactly, and the model they sit in is still mapped", async () => {
    const item = only(await deliver(JAVA_BODY, messageIdAt(Date.now() - 1_000)));
    expect(item).toMatchObject({
      auctioneer__id: '9007199254740993',
      auctioneer__name: 'Harbour',
      lotId: '1234567890123456789',
    });
  });

  it('a body nested deeper than the reader follows is refused in plain words, its big integer never rounded', async () => {
    const deep = `{"auctioneerUuid":"a","auctionUuid":"b","status":"OPEN","lotId":9007199254740993,"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const refused = await failure(deliver(deep, messageIdAt(Date.now() - 1_000)));
    expect(refused).toMatchObject({ code: 'InvalidPayload' });
    expect(refused.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
  });

  it('Test trigger gives the very same item as the live delivery', async () => {
    const id = messageIdAt(Date.now() - 1_000);
    const live = only(await deliver(JAVA_BODY, id));
    const scope = logAnswer(id, JAVA_BODY);
    const listed = only(await zapier().performList({ authData, inputData: {} }));
    scope.done();
    expect(listed).toEqual(live);
  });

  it("so does Svix's copy, for a delivery signed with a secret since replaced", async () => {
    // Svix's answer for a message, its numbers written as Svix writes them.
    const kept = (id: string, payloadText: string) =>
      `{"id":"${id}","eventType":"AUCTION_STATUS_CHANGE","payload":${payloadText},"timestamp":"${new Date().toISOString()}"}`;
    const json = { 'content-type': 'application/json' };
    const rotated = newSecret();
    const first = messageIdAt(Date.now() - 500);
    // A delivery signed with the new secret alone: confirmed, then the new secret read.
    nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/msg/${first}`)
      .query({ with_content: 'true' })
      .reply(200, kept(first, JSON.stringify(payload)), json)
      .get(`/api/v1/app/${APP_ID}/endpoint/${ENDPOINT_ID}/secret`)
      .reply(200, { key: rotated });
    await deliver(JSON.stringify(payload), first, [rotated]);
    const id = messageIdAt(Date.now() - 1_000);
    const record = nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/msg/${id}`)
      .query({ with_content: 'true' })
      .reply(200, kept(id, JAVA_BODY), json);
    const item = only(await deliver(JAVA_BODY, id, [SECRET]));
    record.done();
    expect(item).toMatchObject({ auctioneer__id: '9007199254740993', lotId: '1234567890123456789' });
  });

  it('any extra number arrives as the number a double keeps, or as its exact text', async () => {
    const token = fc.oneof(
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc
        .double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 })
        .map((value) => JSON.stringify(value)),
      fc.constantFrom('-0', '1e400', '-1e400', '1e-400'),
      fc.stringMatching(/^[1-9]\d{15,60}$/),
    );
    const extras = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), token), {
      minLength: 1,
      maxLength: 4,
      selector: ([key]) => key,
    });
    await fc.assert(
      fc.asyncProperty(extras, async (fields) => {
        const body = `{${[
          ...Object.entries(payload).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`),
          ...fields.map(([key, text]) => `"x${key}":${text}`),
        ].join(',')}}`;
        const item = only(await deliver(body, messageIdAt(Date.now() - 1_000)));
        for (const [key, text] of fields) {
          const received = item[`x${key}`];
          const asNumber = Number(text);
          const keeps = Number.isFinite(asNumber) && (!/^-?\d+$/.test(text) || Number.isSafeInteger(asNumber));
          const underflows = asNumber === 0 && /[1-9]/.test(text.split(/[eE]/)[0] ?? '');
          expect(received).toEqual(keeps && !underflows ? asNumber : text);
        }
      }),
      { numRuns: 80 },
    );
  });

  it('a key that is a long number is named as it is written', () => {
    expect(humanise(['lots', '9007199254740993'])).toBe('Lots 9007199254740993');
    expect(humanise(['lots', '0', 'title'])).toBe('Lots 1 Title');
  });
});
