/**
 * Flat Zap fields from a field list: one list per model gives both the mapper
 * and its outputFields, so the two cannot drift apart. Nested structures
 * flatten with `__` (`address__city`); every key is always present, `null`
 * when the model has no value, so a Zap mapping never silently disappears.
 */
export type ZapValue = string | number | boolean | null;
export type ZapFields = Record<string, ZapValue>;

export interface FieldSpec<M> {
  key: string;
  label: string;
  type: 'string' | 'number' | 'boolean' | 'datetime';
  read: (model: M) => string | number | boolean | undefined;
}

export interface OutputField {
  key: string;
  label: string;
  type: FieldSpec<unknown>['type'];
  /** A list of values (Zapier maps it as one). */
  list?: boolean;
  /** What the field holds, in words for the person building the Zap. */
  helpText?: string;
}

export const mapFields = <M>(specs: readonly FieldSpec<M>[], model: M): ZapFields => {
  const fields: ZapFields = {};
  for (const spec of specs) fields[spec.key] = spec.read(model) ?? null;
  return fields;
};

export const outputFieldsOf = <M>(specs: readonly FieldSpec<M>[]): OutputField[] =>
  specs.map(({ key, label, type }) => ({ key, label, type }));

/** A model's fields under a parent: keys `prefix__key`, labels "Prefix Label". */
export const nested = <P, C>(
  prefix: string,
  labelPrefix: string,
  specs: readonly FieldSpec<C>[],
  pick: (parent: P) => C | undefined,
): FieldSpec<P>[] =>
  specs.map((spec) => ({
    key: `${prefix}__${spec.key}`,
    label: `${labelPrefix} ${spec.label}`,
    type: spec.type,
    read: (parent: P) => {
      const child = pick(parent);
      return child === undefined ? undefined : spec.read(child);
    },
  }));
