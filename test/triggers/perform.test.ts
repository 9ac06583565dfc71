import nock from 'nock';
import { CLAIM_TTL_SECONDS, SIGNING_WINDOW } from '../../src/delivery/claim';
import { RECORD_REFUSALS, refusalMessage, skippedMessage } from '../../src/messages';
import {
  APP_ID,
  MSG_ID,
  MSG_OCCURRED_AT,
  MSG_TIME,
  PROVIDER,
  SECRET,
  TARGET_URL,
  authData,
  failure,
  messageIdAt,
  newSecret,
  payload,
  signedRequest,
  subscription,
} from '../helpers/fixtures';
import { usePlatform } from '../helpers/platform';

/** perform, run as Zapier runs it: core's handler, z.cache on the platform stand-in. */
const zapier = usePlatform();
const body = JSON.stringify(payload);
const messagePath = `/api/v1/app/${APP_ID}/msg/${MSG_ID}`;

const run = (
  rawRequest: { content: string; headers: Record<string, string> },
  inputData: Record<string, unknown> = {},
  subscribeData: object = subscription,
) => zapier().perform({ authData, subscribeData, rawRequest, cleanedRequest: payload, inputData });

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

describe('perform (a live delivery)', () => {
  it("verifies, decodes and maps a delivery signed by Svix's reference library", async () => {
    await expect(run(signedRequest(body, { at: minutesAgo(2) }))).resolves.toEqual([
      {
        id: MSG_ID,
        auctionUuid: payload.auctionUuid,
        auctioneerUuid: payload.auctioneerUuid,
        status: 'OPEN_FOR_BIDDING',
        statusLabel: 'Open For Bidding',
        eventType: 'AUCTION_STATUS_CHANGE',
        // When the event happened (its message id says so), not when this delivery was signed.
        occurredAt: MSG_OCCURRED_AT,
      },
    ]);
  });

  it('accepts white-labelled Http-Webhook-* headers', async () => {
    await expect(run(signedRequest(body, { headerPrefix: 'Http-Webhook' }))).resolves.toHaveLength(1);
  });

  it('accepts a delivery signed with both secrets during a rotation, whichever comes first', async () => {
    await expect(run(signedRequest(body, { secrets: [newSecret(), SECRET] }))).resolves.toHaveLength(1);
  });

  it('makes no Svix request when the stored secret verifies', async () => {
    // The network is closed and nothing is mocked: any Svix request would fail this run.
    await expect(run(signedRequest(body))).resolves.toHaveLength(1);
  });

  it.each([
    ['20 minutes', 20],
    ['3 hours', 180],
    ['6 days', 6 * 24 * 60],
  ])('runs a delivery that waited %s in Zapier’s queue after it was signed', async (_label, minutes) => {
    await expect(run(signedRequest(body, { at: minutesAgo(minutes) }))).resolves.toHaveLength(1);
  });

  it('refuses, with a halt, a delivery signed longer ago than the Zap remembers the events it ran', async () => {
    const tooOld = minutesAgo(SIGNING_WINDOW.maxAgeSeconds / 60 + 1);
    const refused = await failure(run(signedRequest(body, { at: tooOld })));
    expect(refused.name).toBe('HaltedError');
    expect(refused.message).toMatch(/this delivery was sent over 7 days ago/);
    // Every delivery inside the window finds the claim of an earlier one.
    expect(CLAIM_TTL_SECONDS).toBeGreaterThan(SIGNING_WINDOW.maxAgeSeconds);
  });

  it('refuses, with a halt, a fresh delivery of an event older than the Zap remembers (a resend by hand)', async () => {
    const eightDaysAgo = messageIdAt(Date.now() - 8 * 24 * 60 * 60_000);
    const refused = await failure(run(signedRequest(body, { msgId: eightDaysAgo })));
    expect(refused.name).toBe('HaltedError');
    expect(refused.message).toMatch(/this event happened over 7 days ago/);
    const sixDaysAgo = messageIdAt(Date.now() - 6 * 24 * 60 * 60_000);
    await expect(run(signedRequest(body, { msgId: sixDaysAgo }))).resolves.toHaveLength(1);
  });

  it('refuses a delivery signed more than five minutes ahead', async () => {
    // Ten minutes, not six: minutes clear of the edge however long the machine pauses (the exact edge,
    // on a frozen clock, is in test/reliability/hostileInput.test.ts).
    const refused = await failure(run(signedRequest(body, { at: new Date(Date.now() + 10 * 60_000) })));
    expect(refused.name).toBe('HaltedError');
    expect(refused.message).toMatch(/more than 5 minutes in the future/);
  });

  it.each([
    [
      'a body changed after signing',
      (r: ReturnType<typeof signedRequest>) => ({ ...r, content: r.content.replace('OPEN', 'SHUT') }),
      1,
    ],
    ['a signature made with another secret', () => signedRequest(body, { secrets: [newSecret()] }), 1],
    [
      'no signature header',
      (r: ReturnType<typeof signedRequest>) => ({ ...r, headers: { 'Http-Svix-Id': MSG_ID } }),
      0,
    ],
  ])('halts on %s, with a plain message and nothing secret in it', async (_what, tamper, confirmations) => {
    // A mismatch asks Svix for the message by its id: it has none. Without headers, nothing is asked.
    const scope = nock(PROVIDER);
    if (confirmations > 0)
      scope
        .get(messagePath)
        .query({ with_content: true })
        .reply(404, { code: 'not_found', detail: 'Entity not found' });
    const refused = await failure(run(tamper(signedRequest(body))));
    expect(refused.name).toBe('HaltedError');
    expect(refused.message).toMatch(/the Zap did not run/);
    // Core appends the bundle (with the endpoint secret) to errors it may contextify: not to these.
    expect(refused.message).not.toMatch(/What happened|whsec_|subscribeData/);
    scope.done();
  });

  it.each([
    ['another event type', { eventType: 'ANOTHER_EVENT', payload }, RECORD_REFUSALS.notConfirmed],
    ['a message whose content Svix no longer keeps', { payload: { expired: true } }, RECORD_REFUSALS.expired],
  ])('halts on a signature no secret made when Svix keeps its message as %s', async (_, kept, message) => {
    const record = { id: MSG_ID, eventType: 'AUCTION_STATUS_CHANGE', timestamp: MSG_OCCURRED_AT, ...kept };
    const scope = nock(PROVIDER).get(messagePath).query({ with_content: true }).reply(200, record);
    const refused = await failure(run(signedRequest(body, { secrets: [newSecret()] })));
    expect(refused).toMatchObject({ name: 'HaltedError', message });
    scope.done();
  });

  it('halts on a request that has no body', async () => {
    const refused = await failure(zapier().perform({ authData, subscribeData: subscription, rawRequest: {} }));
    expect(refused.name).toBe('HaltedError');
    expect(refused.message).toMatch(/an empty request reached this Zap's address/);
  });

  it('names the field of a payload that does not decode, never its value, as an error', async () => {
    const bad = JSON.stringify({ ...payload, status: 42, auctionUuid: undefined, extra: 'SECRET-VALUE-123' });
    const refused = await failure(run(signedRequest(bad)));
    expect(refused.code).toBe('InvalidPayload');
    expect(refused.message).toMatch(/^Send these field names to the auction service's support team: .*\bstatus\b/);
    expect(refused.message).toMatch(/\bauctionUuid\b/);
    expect(refused.message).not.toContain('42');
    expect(refused.message).not.toContain('SECRET-VALUE-123');
  });

  it('halts a request that carries a body but no headers at all, as one without Svix’s signature', async () => {
    const refused = await failure(
      zapier().perform({ authData, subscribeData: subscription, rawRequest: { content: body }, inputData: {} }),
    );
    expect(refused).toMatchObject({ name: 'HaltedError', message: refusalMessage('missing-headers') });
  });

  it('reports a body that is not JSON in plain words', async () => {
    const refused = await failure(run(signedRequest('<html>not json</html>')));
    expect(refused.code).toBe('InvalidPayload');
    expect(refused.message).toMatch(/its content is not JSON/);
  });

  it('applies the statuses filter case-insensitively', async () => {
    await expect(
      run(signedRequest(body, { msgId: messageIdAt(Date.now()) }), { statuses: ['open_for_bidding'] }),
    ).resolves.toHaveLength(1);
    await expect(
      run(signedRequest(body, { msgId: messageIdAt(Date.now()) }), {
        statuses: ['Open For Bidding', 'CLOSED'],
      }),
    ).resolves.toHaveLength(1);
    await expect(run(signedRequest(body), { statuses: ['CLOSED'] })).resolves.toEqual([]);
  });

  it('shows an event the options skip, halted with the option that skipped it, where the person asked (#54)', async () => {
    const showing = { statuses: ['CLOSED'], showSkipped: true };
    const halted = await failure(run(signedRequest(body, { msgId: messageIdAt(Date.now()) }), showing));
    expect(halted).toMatchObject({ name: 'HaltedError', message: skippedMessage('statuses', 'OPEN_FOR_BIDDING') });
    // The option, and the status by its real name: a builder learns the names the auction service uses (#61.8).
    expect(halted.message).toContain('"Only These Statuses" skipped this one (status OPEN_FOR_BIDDING)');
    // A copy of it again is a duplicate, not a skip: quietly nothing.
    const other = { auctioneerUuid: '11111111-2222-3333-4444-555555555555', showSkipped: 'yes' };
    const id = messageIdAt(Date.now());
    await expect(failure(run(signedRequest(body, { msgId: id }), other))).resolves.toMatchObject({
      message: skippedMessage('auctioneerUuid', 'OPEN_FOR_BIDDING'),
    });
    await expect(run(signedRequest(body, { msgId: id }), other)).resolves.toEqual([]);
  });

  it('applies the auctioneer filter', async () => {
    const other = { auctioneerUuid: '11111111-2222-3333-4444-555555555555' };
    await expect(run(signedRequest(body, { msgId: messageIdAt(Date.now()) }), other)).resolves.toEqual([]);
    await expect(
      run(signedRequest(body, { msgId: messageIdAt(Date.now()) }), {
        auctioneerUuid: payload.auctioneerUuid.toUpperCase(),
      }),
    ).resolves.toHaveLength(1);
  });

  it('asks to turn the Zap off and on when a delivery comes without the subscription data', async () => {
    const refused = await failure(zapier().perform({ authData, rawRequest: signedRequest(body) }));
    expect(refused.code).toBe('MissingSubscription');
    expect(refused.message).toMatch(/Turn the Zap off and on again/);
  });

  it('answers as "Test trigger" does when run with no delivery at all (the CLI\'s invoke trigger)', async () => {
    const scope = nock(PROVIDER)
      .get(`/api/v1/app/${APP_ID}/msg`)
      .query(true)
      .times(2)
      .reply(200, {
        data: [
          {
            id: MSG_ID,
            eventType: 'AUCTION_STATUS_CHANGE',
            payload,
            timestamp: new Date(MSG_TIME).toISOString(),
          },
        ],
        iterator: null,
        prevIterator: null,
        done: true,
      });
    const items = await zapier().perform({ authData, inputData: {} });
    expect(items).toEqual([expect.objectContaining({ id: MSG_ID, status: payload.status })]);
    await expect(zapier().performList({ authData, inputData: {} })).resolves.toEqual(items);
    scope.done();
  });

  it.each([
    ['its subscription and address', { subscribeData: subscription, targetUrl: TARGET_URL }],
    ['its subscription', { subscribeData: subscription }],
    ['its address', { targetUrl: TARGET_URL }],
  ])(
    'fails closed: a turned-on Zap run with %s but no delivery halts, and reads and runs nothing',
    async (_what, zap) => {
      // Any request would take this answer: it must stay unused.
      const Svix = nock(PROVIDER).get(/.*/).reply(200, { data: [], iterator: null, prevIterator: null, done: true });
      const refused = await failure(zapier().perform({ authData, inputData: {}, ...zap }));
      expect(refused).toMatchObject({ name: 'HaltedError', message: refusalMessage('no-delivery') });
      expect(Svix.isDone()).toBe(false);
      expect(zapier().calls()).toEqual([]);
    },
  );
});
