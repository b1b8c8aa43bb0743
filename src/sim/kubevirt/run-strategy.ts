/** RunStrategy resolution (runStrategy, or the deprecated `spec.running`) and the stateChangeRequests queue. */
import type { KObject } from '../store/types.js';
import type { Json } from './objects.js';
import { digArray } from './objects.js';

export type RunStrategy = 'Always' | 'Halted' | 'Manual' | 'RerunOnFailure' | 'Once' | 'WaitAsReceiver';
const STRATEGIES = new Set<string>(['Always', 'Halted', 'Manual', 'RerunOnFailure', 'Once', 'WaitAsReceiver']);

export function runStrategyOf(vm: KObject): RunStrategy {
  const spec = (vm.spec ?? {}) as Json;
  if (typeof spec.runStrategy === 'string' && STRATEGIES.has(spec.runStrategy)) return spec.runStrategy as RunStrategy;
  if (spec.running === true) return 'Always';
  return 'Halted';
}

export interface StateChangeRequest {
  action: 'Start' | 'Stop';
  uid?: string;
  data?: Record<string, string>;
}

export function stateChangeRequests(vm: KObject): StateChangeRequest[] {
  return digArray(vm, 'status', 'stateChangeRequests') as unknown as StateChangeRequest[];
}
