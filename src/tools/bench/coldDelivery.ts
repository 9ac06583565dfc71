// One delivery in a process of its own, as a cold Lambda runs it: reads
// `{fields, bundle}` (the platform stand-in's event fields and a delivery) on
// stdin, runs perform through core's handler, and exits 0 when it ran the Zap.
import { join } from 'node:path';
import { createAppHandler } from 'zapier-platform-core';
import { TRIGGER_KEY } from '../../triggers/auctionStatusChanged';

const chunks: Buffer[] = [];
process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
process.stdin.on('end', () => {
  const input: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (typeof input !== 'object' || input === null || !('fields' in input) || !('bundle' in input)) {
    process.exitCode = 2;
    return;
  }
  const { fields, bundle } = input;
  if (typeof fields !== 'object' || fields === null || typeof bundle !== 'object' || bundle === null) {
    process.exitCode = 2;
    return;
  }
  createAppHandler(join(__dirname, '../../../index.js'))({
    command: 'execute',
    method: `triggers.${TRIGGER_KEY}.operation.perform`,
    bundle,
    ...fields,
  }).then(
    ({ results }) => {
      process.exitCode = Array.isArray(results) && results.length === 1 ? 0 : 1;
    },
    () => {
      process.exitCode = 1;
    },
  );
});
