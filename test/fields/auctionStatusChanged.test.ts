import {
  auctionStatusChangedOutputFields,
  auctionStatusChangedSample,
  eventTimeMs,
  isoWithOffset,
  statusLabel,
  toTriggerItem,
} from '../../src/fields/auctionStatusChanged';
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
  });
});
