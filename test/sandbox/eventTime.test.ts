import { randomBytes } from 'node:crypto';
import app from '../../src';
import { timeOfSvixId } from '../../src/svix/ksuid';
import { AuctionService } from '../../src/tools/sandbox/auctions';
import { SvixEmulator } from '../../src/tools/sandbox/emulator';
import { HookRunner } from '../../src/tools/sandbox/hookRunner';
import { PlatformStandIn } from '../../src/tools/sandbox/platform';
import { SvixClient } from '../../src/tools/setup/client';
import { runSetup } from '../../src/tools/setup/setup';

/**
 * In the sandbox, as `npm start` shows it: a Zap run's Occurred At is when the
 * auction's status changed (the emulator mints message ids that carry it), the
 * same when Svix delivers the event again later.
 */
describe('Occurred At in the sandbox', () => {
  it("is the event's time, not the time of the delivery, for the first delivery and a later one", async () => {
    const apiKey = `sk_sandbox_${randomBytes(8).toString('hex')}`;
    const emulator = new SvixEmulator({ apiKey });
    const platform = new PlatformStandIn();
    const baseUrl = await emulator.start();
    await platform.start();
    const client = new SvixClient({ baseUrl, apiKey });
    const { appId } = await runSetup({ client });
    const runner = new HookRunner({ app, platform, authData: { apiKey, appId, serverUrl: baseUrl } });
    try {
      await runner.start();
      const zap = await runner.turnOn('Every event');
      const auctionService = new AuctionService(client, appId);
      await auctionService.emitNext(1);
      await emulator.idle();
      await runner.idle();
      const emitted = auctionService.emitted[0];
      if (!emitted) throw new Error('nothing was emitted');
      // Svix made the message as the auction service emitted it; its id says when.
      const createdAt = timeOfSvixId(emitted.messageId) ?? Number.NaN;
      expect(Math.abs(createdAt - emitted.at)).toBeLessThan(1_000);
      // Delivered again more than a second later, to a Zap that has forgotten it ran (its cache emptied).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      platform.clear();
      emulator.resend(appId, emitted.messageId, zap.subscribeData.id);
      await emulator.idle();
      await runner.idle();
      const expected = new Date(Math.floor(createdAt / 1000) * 1000).toISOString().replace('.000Z', '+00:00');
      expect(runner.runs.map((run) => run.outcome)).toEqual(['ran', 'ran']);
      expect(runner.runs.map((run) => run.items[0]?.occurredAt)).toEqual([expected, expected]);
      // The two deliveries were signed more than a second apart.
      expect((runner.runs[1]?.startedAt ?? 0) - (runner.runs[0]?.startedAt ?? 0)).toBeGreaterThan(1_000);
      await runner.turnOff(zap);
    } finally {
      await runner.stop();
      await emulator.stop();
      await platform.stop();
    }
  });
});
