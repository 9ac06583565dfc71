import { callerOf } from '../../src/svix/client';
import { Deadline, requestSettings } from '../../src/zapier/io';
import { authData } from '../helpers/fixtures';
import { createAppTester, type ZObject } from 'zapier-platform-core';
import app from '../../src';

/** An operation's budget for its Svix calls, counted from when it began: waits before a first call count. */

describe('the deadline of an operation', () => {
  it('counts from when the operation began, so time spent waiting before its first call is not given again', () => {
    const waited = 8_000;
    const since = Deadline.since(Date.now() - waited).remainingMs();
    expect(since).toBeLessThanOrEqual(requestSettings.operationBudgetMs - waited);
    expect(since).toBeGreaterThan(requestSettings.operationBudgetMs - waited - 1_000);
    expect(Deadline.since().remainingMs()).toBeGreaterThan(requestSettings.operationBudgetMs - 1_000);
  });

  it('a caller given the moment its delivery began has that deadline', async () => {
    const tester = createAppTester(app);
    const remaining = await tester(
      async (z: ZObject) => callerOf(z, { authData }, 'zap-run', Date.now() - 10_000).deadline.remainingMs(),
      { authData },
    );
    expect(remaining).toBeLessThanOrEqual(requestSettings.operationBudgetMs - 10_000);
    expect(remaining).toBeGreaterThan(requestSettings.operationBudgetMs - 10_000 - 1_000);
  });
});
