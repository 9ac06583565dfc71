import * as t from 'io-ts';
import type { Either } from 'fp-ts/Either';
import { isRight, left, right } from 'fp-ts/Either';

/**
 * Decode failures as plain lines naming the path and what was expected
 * (`AddressModel.postcode: expected text`), never the value that was there:
 * payloads may carry personal data.
 */

const FRIENDLY: Record<string, string> = {
  string: 'text',
  NonEmptyText: 'text',
  text: 'text',
  number: 'a number',
  boolean: 'true or false',
  Long: 'a whole number or a string of digits',
  CountryCode: 'a two-letter country code',
  UnknownRecord: 'an object',
};

const expected = (name: string): string => {
  if (FRIENDLY[name]) return FRIENDLY[name];
  if (/^"[^"]*"$/.test(name)) return `exactly ${name}`;
  if (/^\{/.test(name)) return 'an object';
  if (/^Array</.test(name)) return 'a list';
  if (/ \| /.test(name)) {
    const parts = name.split(' | ').filter((part) => part !== 'null' && part !== 'undefined');
    return parts.length === 1 && parts[0] ? expected(parts[0]) : name;
  }
  return name;
};

/** A named codec (not an anonymous combinator's generated name) starts a readable path. */
const isNamed = (name: string): boolean => /^[A-Za-z_@][A-Za-z0-9_]*$/.test(name) && !(name in FRIENDLY);

const unwrap = (type: t.Decoder<unknown, unknown>): t.Decoder<unknown, unknown> =>
  type instanceof t.ExactType || type instanceof t.RefinementType || type instanceof t.ReadonlyType
    ? unwrap(type.type)
    : type;

/** Only these hold fields or items; keys under anything else (intersection members, wrappers) are not a path. */
const holdsFields = (type: t.Decoder<unknown, unknown>): boolean => {
  const inner = unwrap(type);
  return (
    inner instanceof t.InterfaceType ||
    inner instanceof t.PartialType ||
    inner instanceof t.DictionaryType ||
    inner instanceof t.ArrayType ||
    inner instanceof t.ReadonlyArrayType
  );
};

/** The field names (and list positions) from the decoded value down to the failing one. */
export const errorPath = (error: t.ValidationError): string[] => {
  const keys: string[] = [];
  error.context.forEach((entry, index) => {
    const parent = error.context[index - 1];
    // Intersection and union members are keyed by position: not part of the path.
    const positional = /^\d+$/.test(entry.key) && !(parent && holdsFields(parent.type));
    if (parent && entry.key !== '' && !positional) keys.push(entry.key);
  });
  return keys;
};

export const describeError = (error: t.ValidationError): string => {
  const context = error.context;
  const first = context[0];
  const root = first && isNamed(first.type.name) ? first.type.name : 'value';
  const keys = errorPath(error);
  const last = context[context.length - 1];
  const path = [root, ...keys].join('.');
  if (error.message) return `${path}: ${error.message}`;
  if (last && last.actual === undefined && keys.length > 0) return `${path}: missing`;
  if (keys.length === 0 && last && isNamed(last.type.name)) return `${path}: expected an object`;
  return `${path}: expected ${expected(last?.type.name ?? 'value')}`;
};

export const describeDecodeErrors = (errors: t.Errors): string[] => [...new Set(errors.map(describeError))];

export const decodeWith = <A>(codec: t.Decoder<unknown, A>, input: unknown): Either<string[], A> => {
  const result = codec.decode(input);
  return isRight(result) ? right(result.right) : left(describeDecodeErrors(result.left));
};
