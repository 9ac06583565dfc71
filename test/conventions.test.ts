import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { compileApp, serializeApp } from 'zapier-platform-core/src/tools/schema';
import app from '../src';
import { auctionStatusChangedOutputFields } from '../src/fields/auctionStatusChanged';

/**
 * Zapier's integration checks that can be judged offline, on the app
 * definition exactly as the platform receives it (compiled and serialized).
 */

const Field = t.intersection([
  t.type({ key: t.string }),
  t.partial({ label: t.string, helpText: t.string, type: t.string, dynamic: t.string, list: t.boolean }),
]);
/** A function in outputFields serializes as a reference to it; only the listed fields are judged. */
const FieldOrFunction = t.union([Field, t.string]);
const Trigger = t.type({
  key: t.string,
  noun: t.string,
  display: t.intersection([t.type({ label: t.string, description: t.string }), t.partial({ hidden: t.boolean })]),
  operation: t.intersection([
    t.type({ sample: t.record(t.string, t.unknown) }),
    t.partial({ inputFields: t.array(Field), outputFields: t.array(FieldOrFunction) }),
  ]),
});
const Definition = t.type({
  authentication: t.type({ fields: t.array(Field), connectionLabel: t.string }),
  triggers: t.record(t.string, Trigger),
});

const serialized: unknown = serializeApp(compileApp(app));
const decoded = Definition.decode(serialized);
if (!isRight(decoded)) throw new Error('the serialized app definition does not have the expected shape');
const definition = decoded.right;
const triggers = Object.values(definition.triggers).map((trigger) => ({
  ...trigger,
  operation: {
    ...trigger.operation,
    outputFields: trigger.operation.outputFields?.filter(
      (field): field is t.TypeOf<typeof Field> => typeof field !== 'string',
    ),
  },
}));
const visible = triggers.filter((trigger) => trigger.display.hidden !== true);

/** Words that stay lower case inside a title, as Zapier's style guide writes them. */
const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'by', 'for', 'in', 'of', 'on', 'or', 'the', 'to', 'with']);

const isTitleCase = (label: string): boolean =>
  label
    .split(' ')
    .filter((word) => word !== '')
    .every((word, index) => {
      const letters = word.replace(/^[("']+/, '');
      if (letters === '' || !/^\p{L}/u.test(letters)) return true;
      if (index > 0 && SMALL_WORDS.has(letters)) return true;
      return letters.charAt(0) === letters.charAt(0).toUpperCase();
    });

const allStrings = (value: unknown): string[] => {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allStrings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(allStrings);
  return [];
};

describe("Zapier's conventions, on the serialized definition", () => {
  it('checks the title-case rule itself', () => {
    expect(isTitleCase('Auction Status Changed')).toBe(true);
    expect(isTitleCase('Only This Auctioneer')).toBe(true);
    expect(isTitleCase('Only these statuses')).toBe(false);
    expect(isTitleCase('Status of the Auction')).toBe(true);
  });

  it('writes every label in title case: triggers, nouns, auth, input and output fields', () => {
    const labels = [
      ...triggers.flatMap((trigger) => [trigger.display.label, trigger.noun]),
      ...definition.authentication.fields.map((field) => field.label ?? ''),
      ...triggers.flatMap((trigger) => (trigger.operation.inputFields ?? []).map((field) => field.label ?? '')),
      ...triggers.flatMap((trigger) => (trigger.operation.outputFields ?? []).map((field) => field.label ?? '')),
    ];
    expect(labels.filter((label) => label === '' || !isTitleCase(label))).toEqual([]);
  });

  it('describes every trigger as "Triggers when …", ending with a period', () => {
    for (const trigger of triggers) expect(trigger.display.description).toMatch(/^Triggers when [^\n]+\.$/);
  });

  it('gives every auth field help text; the key and app id link (https) to where they are found', () => {
    for (const field of definition.authentication.fields) expect(field.helpText ?? '').not.toBe('');
    for (const key of ['apiKey', 'appId']) {
      const field = definition.authentication.fields.find((candidate) => candidate.key === key);
      expect(field?.helpText).toMatch(/\]\(https:\/\/[^)\s]+\)/);
    }
  });

  it('labels the connection without any secret or lengthy ID (D003, requirements §3.3): what the test returns', () => {
    expect(definition.authentication.connectionLabel).not.toMatch(/apiKey|secret|password|token|inputData\.id/i);
    expect(definition.authentication.connectionLabel).toBe('{{bundle.inputData.label}}');
  });

  it('keeps every sample and its output fields in step, and labels every output field', () => {
    for (const trigger of triggers) {
      const outputFields = trigger.operation.outputFields ?? [];
      expect(Object.keys(trigger.operation.sample).sort()).toEqual(outputFields.map((field) => field.key).sort());
      for (const field of outputFields) expect(field.label ?? '').not.toBe('');
    }
  });

  it('documents every output field of the visible trigger in the guide, by its label, with what it holds', () => {
    const guide = readFileSync(join(__dirname, '../docs/guide.md'), 'utf8');
    const fields = visible.flatMap((trigger) => trigger.operation.outputFields ?? []);
    expect(fields.length).toBeGreaterThan(5);
    for (const field of fields) {
      expect(guide).toContain(`**${field.label}**`);
      const described = auctionStatusChangedOutputFields.find((spec) => spec.key === field.key)?.helpText ?? '';
      expect(described).not.toBe('');
      expect(guide).toContain(described);
    }
  });

  it('gives date-times in ISO 8601 with an offset', () => {
    for (const trigger of triggers) {
      for (const field of trigger.operation.outputFields ?? []) {
        if (field.type !== 'datetime') continue;
        expect(trigger.operation.sample[field.key]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d)$/);
      }
    }
    const typed = triggers.flatMap((trigger) =>
      (trigger.operation.outputFields ?? []).filter((field) => field.type === 'datetime'),
    );
    expect(typed.length).toBeGreaterThan(0);
  });

  it('links only to https addresses', () => {
    const links = allStrings(serialized).flatMap((text) => text.match(/\bhttps?:\/\/[^\s)"'`]+/g) ?? []);
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((link) => !link.startsWith('https://'))).toEqual([]);
  });

  it('offers a dropdown wherever an id or a status would otherwise be typed by hand', () => {
    const hidden = new Set(triggers.filter((trigger) => trigger.display.hidden === true).map((trigger) => trigger.key));
    for (const trigger of visible) {
      for (const field of trigger.operation.inputFields ?? []) {
        if (!/(Uuid|Id|statuses)$/.test(field.key)) continue;
        expect(field.dynamic).toMatch(/^[a-z_]+\.id\.name$/);
        // The dropdown is fed by a hidden trigger of this app.
        expect(hidden.has((field.dynamic ?? '').split('.')[0] ?? '')).toBe(true);
      }
    }
  });

  it('keeps helper triggers out of the trigger list, with one visible trigger', () => {
    expect(visible.map((trigger) => trigger.key)).toEqual(['auction_status_changed']);
  });
});
