import { CATCH_UP_REACH_MS, EDIT_GRACE_MS, inWords } from '../limits';
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
    default: 'true',
    helpText:
      "Events can arrive late and out of order (after an edit of the Zap, or when it runs events missed while off), so an auction's earlier status could arrive after a newer one. Leave it at **Yes** to skip an event that happened before the newest one this Zap has already run for the same auction, so the Zap never goes backwards. Choose **No** to run the Zap for every event, in the order they arrive.",
  },
  {
    key: 'catchUp',
    label: FILTER_LABELS.catchUp,
    type: 'boolean' as const,
    required: false,
    default: 'false',
    helpText: `Choose **Yes**, before you turn the Zap off, to run it when you turn it on again for the auction events sent while it was off that Svix still holds (those of the last ${inWords(CATCH_UP_REACH_MS)} at least; none after 5 days off, when Svix stops trying), each once. They arrive over the following hours, as Svix retries them, not at once. Leave it at **No** to start from new events when you turn the Zap on, as Zaps usually do; an off of under ${inWords(EDIT_GRACE_MS)} runs them anyway, as Zapier turns a Zap off and on to publish an edit.`,
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
