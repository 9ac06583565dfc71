import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';

/**
 * How the integration is listed in Zapier's App Directory: the app's own name and a sentence about the app.
 * Set in one place, package.json's `appDirectory`, by whoever deploys it: the auction service's name is not in
 * its published interface, so the default is a plain description of what it is. `npm run register` sends both
 * to Zapier; `npm run docs` puts the name in the guide.
 */
export const Listing = t.type({ title: t.string, description: t.string }, 'appDirectory');
export type Listing = t.TypeOf<typeof Listing>;

const PackageJson = t.type({ appDirectory: Listing }, 'package.json');

/** What a listing breaks of Zapier's rules for it, one phrase each (requirements §2.5 and §2.7, check M002). */
export const listingProblems = ({ title, description }: Listing): string[] => {
  const problems: string[] = [];
  if (title.trim() === '' || title !== title.trim()) problems.push('the title is empty or has spaces around it');
  if (/zapier|™|\(tm\)/i.test(title)) problems.push('the title names Zapier or carries a trademark sign');
  if (description.length < 40 || description.length > 140) problems.push('the description is not 40 to 140 characters');
  if (!description.startsWith(`${title} `)) problems.push('the description does not start with the title ("… is a …")');
  if (/zapier|\bsync/i.test(description)) problems.push('the description names Zapier or syncing');
  if (/https?:\/\//i.test(description)) problems.push('the description holds a link');
  return problems;
};

/** The listing in package.json; throws, saying what to fix, when it is missing or breaks a rule. */
export const readListing = (packageJson: unknown): Listing => {
  const decoded = PackageJson.decode(packageJson);
  if (!isRight(decoded)) throw new Error('package.json has no appDirectory with a title and a description.');
  const problems = listingProblems(decoded.right.appDirectory);
  if (problems.length > 0) throw new Error(`package.json's appDirectory: ${problems.join('; ')}.`);
  return decoded.right.appDirectory;
};

/** The project's listing, read when asked for: a listing to fix stops registering, not packaging. */
export const projectListing = (): Listing => {
  const packageJson: unknown = require('../../../package.json');
  return readListing(packageJson);
};
