import { CATCH_UP_REACH_MS, EDIT_GAP_MS, inWords } from '../limits';
import { FILTER_LABELS } from './filters';

/** The options of Auction Status Changed, as the Zap editor shows them (their dropdowns are the hidden triggers). */
export const auctionStatusChangedInputFields = (dropdowns: { statuses: string; auctioneers: string }) => [
  {
    key: 'statuses',
    label: FILTER_LABELS.statuses,
    list: true,
    required: false,
    dynamic: `${dropdowns.statuses}.id.name`,
    helpText:
      'Pick from the statuses your auctions have had recently, or type one that has not happened yet (capitals, spaces and underscores do not matter). Leave empty to run the Zap for every status.',
  },
  {
    key: 'auctioneerUuid',
    label: FILTER_LABELS.auctioneerUuid,
    required: false,
    dynamic: `${dropdowns.auctioneers}.id.name`,
    helpText:
      "Pick an auctioneer seen in recent events: by name where the auction service sends one, otherwise by UUID, the auctioneer's ID: ask the auction service's support team whose it is. Leave empty to run the Zap for every auctioneer.",
  },
  {
    key: 'skipOutdated',
    label: FILTER_LABELS.skipOutdated,
    type: 'boolean' as const,
    required: false,
    default: 'false',
    helpText:
      "For Zaps that keep another system in sync: events can arrive late and out of order, so an auction's earlier status could arrive after a newer one and undo it. Choose **Yes** to skip an event that happened before the newest one this Zap has already run for the same auction. Leave it at **No** to run the Zap for every event, in the order they arrive.",
  },
  {
    key: 'catchUp',
    label: FILTER_LABELS.catchUp,
    type: 'boolean' as const,
    required: false,
    default: 'false',
    helpText: `Choose **Yes** to also run the Zap, when you turn it on again, for the auction events sent while it was off (those of the last ${inWords(CATCH_UP_REACH_MS)}), each once. Leave it at **No** to start from new events, as Zaps usually do; a Zap off for less than ${inWords(EDIT_GAP_MS)} runs them anyway, as Zapier may turn a Zap off and on to publish an edit.`,
  },
  {
    key: 'showSkipped',
    label: FILTER_LABELS.showSkipped,
    type: 'boolean' as const,
    required: false,
    default: 'false',
    helpText:
      "Choose **Yes** to see each event these options skip in the Zap's history, marked Halted with the option that skipped it (halts never turn a Zap off). Leave it at **No** to skip them quietly.",
  },
];
