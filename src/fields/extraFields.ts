import { exactText } from '../models/json';
import type { OutputField, ZapValue } from './zapFields';

/**
 * Every field of an event beyond the three the auction service promises,
 * flattened with `__` as the published models' fields are (`lot__title`), so
 * a field the service adds reaches the Zap without a new version of this
 * integration. A nested object whose `@class` names a published model is
 * decoded with that model's codec and mapped through its field specs
 * (`auctioneer__name`, `address__countryCode`, lower case, `uk` by default);
 * one that does not decode passes through as it is. Only the promised fields
 * can stop a Zap: an extra field never does.
 *
 * Bounded in depth, field count and size: whatever an event carries, the
 * flattening takes little time and memory, and never touches a prototype.
 */

export type ExtraValue = ZapValue | ZapValue[];

export interface ExtraFields {
  /** Flat key → value, in the order the event gives them. */
  values: Record<string, ExtraValue>;
  /** Flat key → a label a person can read ("Auctioneer Name"). */
  labels: Record<string, string>;
}

export const EXTRA_LIMITS = {
  /** Objects and lists nested deeper than this below the event are left out. */
  depth: 4,
  /** At most this many extra fields. */
  fields: 100,
  /** Longer text is cut to this many characters. */
  textLength: 10_000,
  /** At most this many items of a list. */
  listItems: 50,
  /** At most this many characters of text in all. */
  totalLength: 100_000,
};

/** Keys that could reach an object's prototype, and `@class`, which only says which model a structure is. */
const SKIPPED = new Set(['__proto__', 'constructor', 'prototype', '@class']);
/** A key a Zap can use: 1 to 64 characters, none of them a control character. */
const usableKey = (key: string): boolean =>
  key.length > 0 &&
  key.length <= 64 &&
  ![...key].some((character) => (character.codePointAt(0) ?? 0) < 32 || character === '\u007f');

/** A published model's fields for a structure, when its `@class` names one and it decodes. */
export type ModelMapper = (
  value: Record<string, unknown>,
) => { values: Record<string, ZapValue>; labels: Record<string, string> } | undefined;

/** A list position as the flattening writes it: lists keep at most EXTRA_LIMITS.listItems items. */
const LIST_POSITION = /^\d{1,2}$/;

/** Written in capitals in a label, as the models' own labels do. */
const ACRONYMS = new Map([
  ['id', 'ID'],
  ['url', 'URL'],
  ['uuid', 'UUID'],
]);

/**
 * `lotTitle` → `Lot Title`, `auctionUuid` → `Auction UUID`; a list position
 * (0-based, two digits at most) reads from 1. A key of more digits
 * is a key, not a position, and reads as it is written (a number's text).
 */
export const humanise = (path: readonly string[]): string =>
  path
    .map((segment) =>
      LIST_POSITION.test(segment)
        ? String(Number(segment) + 1)
        : segment
            .replace(/([a-z0-9])([A-Z])/gu, '$1 $2')
            .split(/[\s_-]+/u)
            .filter((word) => word !== '')
            .map((word) => ACRONYMS.get(word.toLowerCase()) ?? word.charAt(0).toUpperCase() + word.slice(1))
            .join(' '),
    )
    .join(' ');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A plain value, as a Zap field holds it: a number kept exact by parseJson becomes its exact text. */
const plain = (value: unknown): string | number | boolean | null | undefined => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') {
    return value;
  }
  return exactText(value);
};

/** Does anything in this value, down to the depth limit, carry `@class`? Then the models are needed. */
export const mentionsModel = (value: unknown, depth = 0): boolean => {
  if (depth > EXTRA_LIMITS.depth || typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    return value.slice(0, EXTRA_LIMITS.listItems).some((item) => mentionsModel(item, depth + 1));
  }
  if (Object.prototype.hasOwnProperty.call(value, '@class')) return true;
  return Object.values(value)
    .slice(0, EXTRA_LIMITS.fields)
    .some((item) => mentionsModel(item, depth + 1));
};

export const flattenExtras = (
  event: object,
  promised: readonly string[],
  mapModel: ModelMapper | undefined,
): ExtraFields => {
  const values = new Map<string, ExtraValue>();
  const labels = new Map<string, string>();
  let characters = 0;
  /** Room for one more field; for text, also room left of the total. */
  const room = (text = true) => values.size < EXTRA_LIMITS.fields && (!text || characters < EXTRA_LIMITS.totalLength);
  /** Text within its own limit and what is left of the total; counted only once it is stored. */
  const cut = (value: string, left: number): string =>
    value.length > Math.min(EXTRA_LIMITS.textLength, left)
      ? value.slice(0, Math.min(EXTRA_LIMITS.textLength, left))
      : value;
  const scalar = (value: string | number | boolean | null, left: number): ZapValue =>
    typeof value === 'string' ? cut(value, left) : typeof value === 'number' && !Number.isFinite(value) ? null : value;
  const length = (value: ZapValue): number => (typeof value === 'string' ? value.length : 0);
  const store = (path: readonly string[], value: ExtraValue, used: number, label: string) => {
    values.set(path.join('__'), value);
    labels.set(path.join('__'), label);
    characters += used;
  };
  const free = (path: readonly string[], text = true) => room(text) && !values.has(path.join('__'));
  const put = (path: readonly string[], value: string | number | boolean | null, label = humanise(path)) => {
    if (!free(path, typeof value === 'string')) return;
    const kept = scalar(value, EXTRA_LIMITS.totalLength - characters);
    store(path, kept, length(kept), label);
  };
  /** A list of plain values keeps the items that fit. */
  const putList = (path: readonly string[], list: readonly (string | number | boolean | null)[]) => {
    if (!free(path)) return;
    const items: ZapValue[] = [];
    let used = 0;
    for (const item of list) {
      const left = EXTRA_LIMITS.totalLength - characters - used;
      if (typeof item === 'string' && left <= 0) break;
      const kept = scalar(item, left);
      items.push(kept);
      used += length(kept);
    }
    store(path, items, used, humanise(path));
  };

  const visit = (value: unknown, path: readonly string[], depth: number): void => {
    if (!room(false) || depth > EXTRA_LIMITS.depth) return;
    const scalarValue = plain(value);
    if (scalarValue !== undefined) {
      put(path, scalarValue);
      return;
    }
    if (Array.isArray(value)) {
      const items = value.slice(0, EXTRA_LIMITS.listItems);
      const scalars = items.map(plain);
      if (scalars.every((item) => item !== undefined))
        putList(
          path,
          scalars.filter((item) => item !== undefined),
        );
      else items.forEach((item, index) => visit(item, [...path, String(index)], depth + 1));
      return;
    }
    if (!isRecord(value)) return;
    const model = mapModel?.(value);
    if (model) {
      for (const [key, modelValue] of Object.entries(model.values)) {
        put([...path, key], modelValue, `${humanise(path)} ${model.labels[key] ?? humanise([key])}`);
      }
    }
    for (const [key, child] of Object.entries(value)) {
      if (SKIPPED.has(key) || !usableKey(key)) continue;
      if (model && Object.prototype.hasOwnProperty.call(model.values, key)) continue;
      visit(child, [...path, key], depth + 1);
    }
  };

  for (const [key, value] of Object.entries(event)) {
    if (promised.includes(key) || SKIPPED.has(key) || !usableKey(key)) continue;
    visit(value, [key], 1);
  }
  return { values: Object.fromEntries(values), labels: Object.fromEntries(labels) };
};

/** Output fields for the extra fields recent items carried (by their key in the items), typed by a value seen. */
export const extraOutputFieldsOf = (
  items: ReadonlyArray<Readonly<Record<string, unknown>>>,
  labels: Readonly<Record<string, string>>,
): OutputField[] =>
  Object.entries(labels).map(([key, label]) => {
    const value = items.find((item) => item[key] !== undefined && item[key] !== null)?.[key];
    const type = typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string';
    return Array.isArray(value) ? { key, label, type, list: true } : { key, label, type };
  });
