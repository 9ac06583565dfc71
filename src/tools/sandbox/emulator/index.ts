export { SvixEmulator, type EmulatorOptions, type EmulatorStats, type Fault, type FaultContext } from './server';
export { SANDBOX_RETRY_SCHEDULE_MS, PROVIDER_RETRY_SCHEDULE_MS, isLoopbackUrl } from './dispatcher';
export type { AttemptRecord } from './store';
