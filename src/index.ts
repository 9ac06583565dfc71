import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import { defineApp, version as platformVersion } from 'zapier-platform-core';
import { addSvixHeaders, authentication } from './authentication';
import { Runtime } from './delivery/runtime';
import { auctionStatusChanged, TRIGGER_KEY } from './triggers/auctionStatusChanged';
import { recentAuctioneers, recentStatuses } from './triggers/choices';

// The app's version follows package.json, so `zapier-platform push` publishes what npm says.
const PackageJson = t.type({ version: t.string }, 'PackageJson');
const packageJson: unknown = require('../package.json');
const decodedPackage = PackageJson.decode(packageJson);
if (!isRight(decodedPackage)) throw new Error('package.json has no version.');

/**
 * The app, for one process: what its deliveries keep (the endpoints' secrets and Svix's record, the cache's
 * habits) lives in its runtime. Zapier loads it once per process; a test or the simulation makes more.
 */
export const createApp = (runtime = new Runtime()) =>
  defineApp({
    version: decodedPackage.right.version,
    platformVersion,
    authentication,
    beforeRequest: [addSvixHeaders],
    // Core would otherwise log every request made outside z.request, its own z.cache
    // calls included, with their answers: what the app keeps in z.cache holds secrets.
    flags: { skipHttpPatch: true },
    triggers: {
      [TRIGGER_KEY]: auctionStatusChanged(runtime),
      // Hidden: they feed the dropdowns of Auction Status Changed.
      [recentStatuses.key]: recentStatuses,
      [recentAuctioneers.key]: recentAuctioneers,
    },
  });

export default createApp();
