import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { auctioneerChoices, statusChoices, type Choice } from '../fields/choices';
import { recentEvents } from './recentEvents';
import { callerOf } from '../svix/client';
import { nodeClock } from '../zapier/clock';
import type * as ZapLife from '../zap/life';

/**
 * Hidden triggers that feed the Auction Status Changed trigger's dropdowns:
 * the statuses and the auctioneers seen in the Consumer App's recent events,
 * so nobody has to type a status or copy a UUID by hand. Zapier still lets a
 * person type a value the list does not hold (a status not seen yet).
 */

/** Enough events to find every status and auctioneer in use, within one Svix page. */
const CHOICES_LIMIT = 250;

/** When this process last swept each Consumer App: a dropdown sweeps it now and then (zap/life.ts). */
const swept = new Map<string, number>();
const recent = async (z: ZObject, bundle: Bundle) => {
  const events = await recentEvents(z, bundle, CHOICES_LIMIT);
  const life: typeof ZapLife = require('../zap/life');
  await life.sweepNowAndThen(callerOf(z, bundle, 'zap-editor'), nodeClock, swept);
  return events.items;
};

const listStatuses = async (z: ZObject, bundle: Bundle): Promise<Choice[]> => statusChoices(await recent(z, bundle));

const listAuctioneers = async (z: ZObject, bundle: Bundle): Promise<Choice[]> =>
  auctioneerChoices(await recent(z, bundle));

export const choiceOperations = { listStatuses, listAuctioneers };

const choiceOutputFields = [
  { key: 'id', label: 'Value' },
  { key: 'name', label: 'Name' },
];

export const recentStatuses = defineTrigger({
  key: 'recent_statuses',
  noun: 'Status',
  display: {
    label: 'Recent Auction Statuses',
    description: 'Triggers when a status first appears among recent auction events (feeds a dropdown).',
    hidden: true,
  },
  operation: {
    perform: listStatuses,
    sample: { id: 'OPEN_FOR_BIDDING', name: 'Open For Bidding (OPEN_FOR_BIDDING)' },
    outputFields: choiceOutputFields,
  },
});

export const recentAuctioneers = defineTrigger({
  key: 'recent_auctioneers',
  noun: 'Auctioneer',
  display: {
    label: 'Recent Auctioneers',
    description: 'Triggers when an auctioneer first appears among recent auction events (feeds a dropdown).',
    hidden: true,
  },
  operation: {
    perform: listAuctioneers,
    sample: {
      id: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20',
      name: '0e7c2f44-3b8e-4f6d-a1d2-9c5b8e7a4f20 (no name sent, last event 22 Nov 2026, 09:30 UTC)',
    },
    outputFields: choiceOutputFields,
  },
});
