import { EDIT_GRACE_MS, SWEEP_PARKED_AFTER_MS } from '../../src/limits';
import { onSubscribe, onSweep, onUnsubscribe, type Found, type Marks } from '../../src/zap/policy';

/** The three tables of a Zap's life (src/zap/policy.ts), row by row: each row a person's rule rests on. */

const NOW = 1_800_000_000_000;
const ID = 'ep_2pQ7uTnVw9XyZa1Bc3De5Fg7Hk1';
const live = (gen = 3, keep = false): Found => ({
  id: ID,
  metadata: { zap: 'zap-1', gen, on: 1, ...(keep ? { keep: '1' as const } : {}) },
  disabled: false,
});
const parked = (ago: number, { gen = 3, keep = false, disabled = false } = {}): Found => ({
  ...live(gen, keep),
  metadata: { ...live(gen, keep).metadata, parked: NOW - ago },
  disabled,
});
const offMark = (ago: number, gen = 3): Marks => ({ off: { id: ID, gen, at: NOW - ago } });
const WITHIN = EDIT_GRACE_MS - 1_000;
const PAST = EDIT_GRACE_MS + 1_000;
/** Past the grace and the time a subscribe that found it within the grace may still take. */
const GONE = SWEEP_PARKED_AFTER_MS + 1_000;

describe('a Zap turned on (onSubscribe)', () => {
  it.each([
    ['no endpoint', undefined, {}, false, 'create'],
    ['live: an edit, its new version first', live(), {}, false, 'point'],
    ['live, marked off within the grace (Svix failed the park)', live(), offMark(WITHIN), false, 'point'],
    ['live, marked off past the grace', live(), offMark(PAST), false, 'replace'],
    ['live, marked off past the grace, with Run Missed', live(), offMark(PAST), true, 'point'],
    ['live, an older generation marked off (an edit)', live(4), offMark(PAST, 3), false, 'point'],
    ['parked within the grace: an edit', parked(WITHIN), {}, false, 'point'],
    ['parked past the grace: off means off', parked(PAST), {}, false, 'replace'],
    ['parked for days, with Run Missed', parked(3 * 24 * 3_600_000), {}, true, 'point'],
  ] as const)('%s: %s', (_, found, marks, asked, decision) => {
    expect(onSubscribe(found, marks, NOW, asked)).toBe(decision);
  });
});

describe('a Zap turned off (onUnsubscribe)', () => {
  const url = 'https://hooks.zapier.test/1/';
  it.each([
    ['its own generation, live', { ...live(3), url }, { gen: 3 }, 'park'],
    ['a newer generation (an edit subscribed first)', { ...live(4), url }, { gen: 3 }, 'leave'],
    ['already parked', { ...parked(WITHIN), url }, { gen: 3 }, 'leave'],
    ['gone', undefined, { gen: 3 }, 'leave'],
    ['no generation kept: its own URL', { ...live(3), url }, { url }, 'park'],
    ['no generation kept: another URL', { ...live(3), url }, { url: 'https://hooks.zapier.test/2/' }, 'leave'],
  ] as const)('%s: %s', (_, found, subscription, decision) => {
    expect(onUnsubscribe(found, subscription)).toBe(decision);
  });
});

describe('a sweep (onSweep)', () => {
  const on = (gen: number, id = ID): NonNullable<Marks['on']> => ({ id, gen, url: 'https://hooks.zapier.test/4/' });
  it.each([
    ['live', live(), {}, { do: 'leave' }],
    ['parked within the grace', parked(WITHIN), {}, { do: 'leave' }],
    ['parked past the grace, a subscribe maybe still pointing it', parked(PAST), {}, { do: 'leave' }],
    ["parked past the grace and a subscribe's time", parked(GONE), {}, { do: 'delete' }],
    ['parked for days with Run Missed', parked(5 * 24 * 3_600_000, { keep: true }), {}, { do: 'leave' }],
    ['parked with Run Missed, disabled by Svix', parked(GONE, { keep: true, disabled: true }), {}, { do: 'delete' }],
    ["live, marked off past the grace and a subscribe's time", live(), offMark(GONE), { do: 'delete' }],
    ['live, marked off long ago, with Run Missed', live(3, true), offMark(GONE), { do: 'park' }],
    ['live, marked off within the grace', live(), offMark(WITHIN), { do: 'leave' }],
    [
      'parked under a newer subscribe (crossing calls)',
      parked(GONE, { gen: 3 }),
      { on: on(4) },
      { do: 'point', url: 'https://hooks.zapier.test/4/', gen: 4 },
    ],
    [
      'parked, its newer subscribe turned off since',
      parked(GONE),
      { on: on(4), off: { id: ID, gen: 4, at: NOW } },
      { do: 'delete' },
    ],
    ['parked, a mark of another endpoint', parked(GONE), { on: on(4, 'ep_other') }, { do: 'delete' }],
    [
      "live at an older generation's hook (its late subscribe pointed it back)",
      live(3),
      { on: on(4) },
      { do: 'point', url: 'https://hooks.zapier.test/4/', gen: 4 },
    ],
    ['live at the newest generation', live(4), { on: on(4) }, { do: 'leave' }],
    [
      'live at an older generation marked off, its newer one on (a late sweep pointed it back)',
      live(4),
      { on: on(5), off: { id: ID, gen: 4, at: NOW - GONE } },
      { do: 'point', url: 'https://hooks.zapier.test/4/', gen: 5 },
    ],
  ] as const)('%s', (_, found, marks, decision) => {
    expect(onSweep(found, marks, NOW)).toEqual(decision);
  });
});
