export { FaultInjector, NO_FAULTS, validateFaultConfig } from './fault-injector.js';
export type { FaultConfig, FaultDecision, Unresponsive } from './fault-injector.js';
