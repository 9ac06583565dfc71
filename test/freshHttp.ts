import http from 'node:http';
import https from 'node:https';

/**
 * Each test file starts with Node's http and https as Node made them, whatever a file before it in the same jest
 * worker left: nock wraps their request functions, and zapier-platform-core wraps them once per process, keeping
 * the functions it found then (its `patchedByZapier` flag), so a reused worker would send a file's requests through
 * an earlier file's nock. Node's own properties are kept on first load, under a symbol on the module itself (the one
 * object a worker's test files share), and put back before each later file loads nock or core.
 */
const KEPT = Symbol.for('auction-status-changed.test.node-http');

for (const module of [http, https]) {
  const kept: unknown = Reflect.get(module, KEPT);
  if (typeof kept !== 'object' || kept === null) {
    Object.defineProperty(module, KEPT, { value: Object.getOwnPropertyDescriptors(module) });
    continue;
  }
  for (const key of Reflect.ownKeys(module))
    if (key !== KEPT && !Object.hasOwn(kept, key)) Reflect.deleteProperty(module, key);
  for (const key of Reflect.ownKeys(kept)) {
    const descriptor: unknown = Reflect.get(kept, key);
    if (typeof descriptor === 'object' && descriptor !== null) Object.defineProperty(module, key, descriptor);
  }
}
