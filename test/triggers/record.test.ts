import { encodeKsuidMs, timeOfProviderId } from '../../src/provider/ksuid';
import type { MessageOut } from '../../src/provider/codecs';
import { status, trim, WINDOW_MS, type Listing, type Windows } from '../../src/triggers/record';

/** A message id made at `at` (Svix's clock, ms), and the delivery of it that arrived at `arrivedAt`. */
const T = Date.UTC(2026, 10, 25, 12, 0, 0);
const idAt = (at: number, salt = 1): string => `msg_${encodeKsuidMs(at, new Uint8Array(15).fill(salt))}`;
const FIVE_MINUTES = 5 * 60_000;

const listing = (startedAt: number, ids: string[] = [], complete = true): Listing => ({
  startedAt,
  complete,
  messages: new Map(
    ids.map((id): [string, MessageOut] => [id, { id, eventType: 'AUCTION_STATUS_CHANGE', payload: {}, timestamp: '' }]),
  ),
});
const windowsWith = (id: string, made: Listing): Windows => {
  const createdAt = timeOfProviderId(id) ?? 0;
  return new Map([[Math.floor(createdAt / WINDOW_MS) * WINDOW_MS, { startsAt: made.startedAt, listing: made }]]);
};

describe("whether Svix's record has answered for a delivery (record.ts status)", () => {
  const id = idAt(T + 300);
  const createdAt = timeOfProviderId(id) ?? 0;

  it('answers when the listing has the message, whenever it began', () => {
    const windows = windowsWith(id, listing(createdAt - 500, [id], false));
    expect(status(windows, { id, arrivedAt: createdAt + 10_000 }, -FIVE_MINUTES)).toBe('answered');
  });

  it('refutes from a whole listing that began after the delivery arrived, to the millisecond', () => {
    const arrivedAt = createdAt + 2_000;
    const at = (startedAt: number) => status(windowsWith(id, listing(startedAt)), { id, arrivedAt }, -FIVE_MINUTES);
    expect(at(arrivedAt)).toBe('answered');
    expect(at(arrivedAt - 1)).toBeUndefined();
  });

  it('refutes from a whole listing that began over a second after the message was made, by Svix’s clock as known', () => {
    // A delivery that arrived long after (it waited in Zapier's queue): the listing began before it arrived.
    const arrivedAt = createdAt + 60 * 60_000;
    const at = (startedAt: number, svixAhead: number) =>
      status(windowsWith(id, listing(startedAt)), { id, arrivedAt }, svixAhead);
    // Svix's clock known no earlier than this side's: a second after the message's time.
    expect(at(createdAt + 1_001, 0)).toBe('answered');
    expect(at(createdAt + 1_000, 0)).toBeUndefined();
    // Svix 90 s ahead: its time was 90 s earlier on this side's clock.
    expect(at(createdAt + 1_001 - 90_000, 90_000)).toBe('answered');
    expect(at(createdAt + 1_000 - 90_000, 90_000)).toBeUndefined();
    // Nothing known: as far behind as a signature allows.
    expect(at(createdAt + 1_001 + FIVE_MINUTES, -FIVE_MINUTES)).toBe('answered');
    expect(at(createdAt + 1_000 + FIVE_MINUTES, -FIVE_MINUTES)).toBeUndefined();
  });

  it('a listing that did not read the whole window refutes nothing', () => {
    const windows = windowsWith(id, listing(createdAt + 60_000, [], false));
    expect(status(windows, { id, arrivedAt: createdAt + 1 }, 0)).toBeUndefined();
  });

  it('another window’s listing says nothing of this delivery', () => {
    const other = idAt(T + 300 + 2 * WINDOW_MS, 2);
    expect(
      status(windowsWith(other, listing(createdAt + 60_000)), { id, arrivedAt: createdAt + 1 }, 0),
    ).toBeUndefined();
  });
});

describe('what the record keeps in memory (record.ts trim)', () => {
  const ids = (window: number, count: number) =>
    Array.from({ length: count }, (_, index) => idAt(T + window * WINDOW_MS + 10, index + 1));
  const windowsOf = (sizes: number[], pending?: number): Windows =>
    new Map(
      sizes.map((size, window) => [
        T + window * WINDOW_MS,
        {
          startsAt: T,
          listing: listing(T, ids(window, size)),
          ...(window === pending ? { pending: new Promise<void>(() => undefined) } : {}),
        },
      ]),
    );

  it('drops the oldest windows listed until their messages fit, never the newest', () => {
    const windows = windowsOf([3, 4, 5]);
    trim(windows, 9);
    expect([...windows.keys()]).toEqual([T + WINDOW_MS, T + 2 * WINDOW_MS]);
    trim(windows, 1);
    expect([...windows.keys()]).toEqual([T + 2 * WINDOW_MS]);
  });

  it('drops the oldest windows past the number kept, whatever they hold', () => {
    const windows = windowsOf([0, 1, 0, 2]);
    trim(windows, 100, 2);
    expect([...windows.keys()]).toEqual([T + 2 * WINDOW_MS, T + 3 * WINDOW_MS]);
  });

  it('keeps everything that fits, and a window whose listing is under way', () => {
    const windows = windowsOf([3, 4, 5], 0);
    trim(windows, 12);
    expect(windows.size).toBe(3);
    trim(windows, 5);
    expect([...windows.keys()]).toEqual([T, T + 2 * WINDOW_MS]);
  });
});
