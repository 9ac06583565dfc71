import * as t from 'io-ts';
import { ClassNames } from './classNames';
import { NonEmptyText, optional, Text } from './primitives';

/**
 * §2.2: a link to an image or document. For a hosted video `url` is only the
 * video's id, so any non-empty text is accepted, not just web addresses.
 */
export const UrlAttachmentApiModel = t.exact(
  t.intersection([
    t.type({ '@class': t.literal(ClassNames.UrlAttachmentApiModel), url: NonEmptyText }),
    t.partial({ label: optional(Text) }),
  ]),
  'UrlAttachmentApiModel',
);
export type UrlAttachmentApiModel = t.TypeOf<typeof UrlAttachmentApiModel>;
