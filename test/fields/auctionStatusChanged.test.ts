import {
  auctionStatusChangedOutputFields,
  auctionStatusChangedSample,
  eventTimeMs,
  isoWithOffset,
  statusLabel,
  toTriggerItem,
} from '../../src/fields/auctionStatusChanged';
import fc from 'fast-check';
import { payload } from '../helpers/fixtures';

describe('trigger fields', () => {
  it('keeps the sample and the outputFields in step, every field labelled', () => {
    expect(Object.keys(auctionStatusChangedSample).sort()).toEqual(
      auctionStatusChangedOutputFields.map((field) => field.key).sort(),
    );
    for (const field of auctionStatusChangedOutputFields)
      expect(field.label).toMatch(/^([A-Z][A-Za-z]*|ID|UUID)( ([A-Z][A-Za-z]*|ID|UUID))*$/);
  });

  it('carries the payload names exactly, plus id, statusLabel, eventType and occurredAt', () => {
    const item = toTriggerItem(payload, { messageId: 'msg_x', occurredAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678) });
    expect(item).toEqual({
      id: 'msg_x',
      auctionUuid: payload.auctionUuid,
      auctioneerUuid: payload.auctioneerUuid,
      status: payload.status,
      statusLabel: 'Open For Bidding',
      eventType: 'AUCTION_STATUS_CHANGE',
      occurredAt: '2026-01-02T03:04:05+00:00',
    });
  });

  it('gives the sample a message id shaped like a live one, which carries its Occurred At', () => {
    expect(auctionStatusChangedSample.id).toMatch(/^msg_[A-Za-z0-9]{27}$/);
    const occurredAt = Date.parse(auctionStatusChangedSample.occurredAt);
    expect(eventTimeMs(auctionStatusChangedSample.id, occurredAt + 60_000)).toBe(occurredAt);
  });

  it.each([
    ['OPEN_FOR_BIDDING', 'Open For Bidding'],
    ['closed', 'Closed'],
    ['lots-sold', 'Lots Sold'],
    ['  PRE  BIDDING ', 'Pre Bidding'],
    ['éTAT_OUVERT', 'État Ouvert'],
    ['入札受付中', '入札受付中'],
  ])('labels %j as %j', (status, label) => {
    expect(statusLabel(status)).toBe(label);
  });

  it('writes times in ISO 8601 with an explicit offset', () => {
    expect(isoWithOffset(0)).toBe('1970-01-01T00:00:00+00:00');
    expect(isoWithOffset(-1)).toBe('1969-12-31T23:59:59+00:00');
    expect(isoWithOffset(Date.UTC(2026, 10, 22, 17, 41, 58, 999))).toBe('2026-11-22T17:41:58+00:00');
    expect(isoWithOffset(Date.UTC(12345, 0, 1))).toBe('+012345-01-01T00:00:00+00:00');
    expect(() => isoWithOffset(Number.NaN)).toThrow(RangeError);
  });

  it('writes every time, in any order, as Date does to the second, and refuses the times Date refuses', () => {
    // The day is remembered between calls: times of one day, of the next, of far-off years and of
    // just past the last time a Date can hold (8.64e15 ms either side of the epoch) interleave.
    const day = 86_400_000;
    const time = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 0, 1) + 3 * day }),
      fc.integer({ min: 8.64e15 - 2 * day, max: 8.64e15 + 2 * day }),
      fc.integer({ min: -8.64e15 - 2 * day, max: -8.64e15 + 2 * day }),
    );
    const asDateWrites = (ms: number): string => {
      const at = new Date(ms);
      return Number.isNaN(at.getTime()) ? 'RangeError' : at.toISOString().replace(/\.\d{3}Z$/, '+00:00');
    };
    const asWritten = (ms: number): string => {
      try {
        return isoWithOffset(ms);
      } catch (error) {
        return error instanceof RangeError ? 'RangeError' : String(error);
      }
    };
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 20 }), (times) => {
        for (const ms of times) expect(asWritten(ms)).toBe(asDateWrites(ms));
      }),
    );
    expect(asWritten(8.64e15)).toBe('+275760-09-13T00:00:00+00:00');
    expect(asWritten(8.64e15 + 1)).toBe('RangeError');
    expect(asWritten(8.64e15 + 1001)).toBe('RangeError');
  });

  it('labels a status the same however often, and however many statuses came before', () => {
    const statuses = Array.from({ length: 150 }, (_, index) => `STATUS_${index}_NOW`);
    const first = statuses.map(statusLabel);
    expect(first[7]).toBe('Status 7 Now');
    expect(statuses.map(statusLabel)).toEqual(first);
    expect(statusLabel('OPEN_FOR_BIDDING')).toBe('Open For Bidding');
  });
});
