import { randomBytes } from 'node:crypto';
import { nodeClock, type Clock } from '../zapier/clock';
import { KnownEndpoints } from './known';

/**
 * What one process keeps for the deliveries it runs, in one object instead of module state: its clock, what it
 * knows of the endpoints it served last, and the tokens its claims write. Zapier runs one per process (src/index.ts)
 * and one delivery at a time in it; the simulation and the sandbox run several, each on a clock of its own.
 */
export class Runtime {
  readonly endpoints: KnownEndpoints;
  private readonly tokenPrefix = randomBytes(12).toString('base64url');
  private claims = 0;

  constructor(
    readonly clock: Clock = nodeClock,
    endpointsKept?: number,
  ) {
    this.endpoints = new KnownEndpoints(endpointsKept);
  }

  /** A token no other claim writes, in any process. */
  claimToken(): string {
    this.claims += 1;
    return `${this.tokenPrefix}.${this.claims}`;
  }
}
