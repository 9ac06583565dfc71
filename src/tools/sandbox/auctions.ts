import { randomUUID } from 'node:crypto';
import { MessageOut } from '../../svix/codecs';
import { EVENT_TYPE_NAME } from '../../svix/eventType';
import type { SvixClient } from '../setup/client';

/**
 * A stand-in for the auction service (§3 of the published interface): a few
 * auctioneers and their auctions; creating an auction emits
 * AUCTION_STATUS_CHANGE with its initial status, and every status change emits
 * the new status, through Svix into the Consumer App.
 *
 * The published interface does not list the status values; these are made up
 * for the sandbox only.
 */
export const SANDBOX_STATUSES = ['DRAFT', 'OPEN_FOR_BIDDING', 'BIDDING_CLOSED', 'LOTS_SOLD'] as const;

export interface Auctioneer {
  uuid: string;
  name: string;
}

export interface Auction {
  uuid: string;
  auctioneer: Auctioneer;
  status: string;
}

export interface Emitted {
  messageId: string;
  auctionUuid: string;
  status: string;
  /** When the status changed (ms since the epoch): the start of the delivery's latency. */
  at: number;
}

export class AuctionService {
  readonly auctioneers: Auctioneer[];
  readonly auctions: Auction[] = [];
  readonly emitted: Emitted[] = [];

  constructor(
    private readonly client: SvixClient,
    private readonly appId: string,
    names: readonly string[] = ['Harbour Street Auctions', 'Northgate Fine Art', 'Millbrook Farm Sales'],
  ) {
    this.auctioneers = names.map((name) => ({ uuid: randomUUID(), name }));
  }

  /** Creates an auction; the event carries its initial status. */
  async createAuction(auctioneer: Auctioneer, status: string = SANDBOX_STATUSES[0]): Promise<Auction> {
    const auction: Auction = { uuid: randomUUID(), auctioneer, status };
    this.auctions.push(auction);
    await this.emit(auction);
    return auction;
  }

  /** Changes an auction's status; the event carries the new status. */
  async changeStatus(auction: Auction, status: string): Promise<void> {
    auction.status = status;
    await this.emit(auction);
  }

  /** Auctions not yet at the end of their life cycle, oldest first. */
  private readonly open: Auction[] = [];

  /**
   * Emits the next event of a steady flow: every `openEvery`-th event (and
   * whenever none is open) opens a new auction, the others move the oldest
   * open auction on a step, so creations and status changes both flow.
   */
  async emitNext(openEvery: number): Promise<void> {
    const oldest = this.open[0];
    const next = oldest ? AuctionService.nextStatus(oldest.status) : undefined;
    if (oldest && next && this.emitted.length % openEvery !== 0) {
      await this.changeStatus(oldest, next);
      if (!AuctionService.nextStatus(next)) this.open.shift();
      return;
    }
    const auctioneer = this.auctioneers[this.auctions.length % this.auctioneers.length];
    if (!auctioneer) throw new Error('the sandbox has no auctioneers');
    this.open.push(await this.createAuction(auctioneer, SANDBOX_STATUSES[0]));
  }

  /** The next status in the sandbox's life cycle, or undefined at its end. */
  static nextStatus(status: string): string | undefined {
    const index = SANDBOX_STATUSES.findIndex((candidate) => candidate === status);
    return index >= 0 ? SANDBOX_STATUSES[index + 1] : undefined;
  }

  private async emit(auction: Auction): Promise<void> {
    const at = Date.now();
    const action = 'sending an auction event';
    const answer = await this.client.call({
      method: 'POST',
      path: `/api/v1/app/${encodeURIComponent(this.appId)}/msg`,
      body: {
        eventType: EVENT_TYPE_NAME,
        payload: { auctioneerUuid: auction.auctioneer.uuid, auctionUuid: auction.uuid, status: auction.status },
      },
      action,
    });
    const message = this.client.decode(MessageOut, answer.body, action);
    this.emitted.push({ messageId: message.id, auctionUuid: auction.uuid, status: auction.status, at });
  }
}
