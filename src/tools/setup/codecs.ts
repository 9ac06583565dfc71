import * as t from 'io-ts';
import { ApplicationOut, nullable } from '../../svix/codecs';

/** The answers only the set-up reads from Svix, decoded at the edge as the product's are (src/svix/codecs.ts). */

/** The Consumer Apps of an environment, as the set-up lists them: with the uid it gives the apps it makes. */
export const ListResponseApplicationOut = t.intersection(
  [
    t.type({
      data: t.array(t.intersection([ApplicationOut, t.partial({ uid: nullable(t.string) })], 'ApplicationOut')),
      done: t.boolean,
    }),
    t.partial({ iterator: nullable(t.string) }),
  ],
  'ListResponse_ApplicationOut_',
);
export type ListResponseApplicationOut = t.TypeOf<typeof ListResponseApplicationOut>;

/** An integration of a Consumer App: app-scoped credentials, as Svix's own Zapier package uses. */
export const IntegrationOut = t.type({ id: t.string, name: t.string }, 'IntegrationOut');
export type IntegrationOut = t.TypeOf<typeof IntegrationOut>;

export const ListResponseIntegrationOut = t.intersection(
  [t.type({ data: t.array(IntegrationOut), done: t.boolean }), t.partial({ iterator: nullable(t.string) })],
  'ListResponse_IntegrationOut_',
);
export type ListResponseIntegrationOut = t.TypeOf<typeof ListResponseIntegrationOut>;

export const IntegrationKeyOut = t.type({ key: t.string }, 'IntegrationKeyOut');
export type IntegrationKeyOut = t.TypeOf<typeof IntegrationKeyOut>;
