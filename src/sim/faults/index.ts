export { FaultInjector, NO_FAULTS, validateFaultConfig } from './fault-injector.js';
export type { FaultConfig, FaultDecision, FaultRequest, Unresponsive } from './fault-injector.js';
