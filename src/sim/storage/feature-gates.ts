/** KubeVirt feature gates as the KubeVirt CR sets them (`spec.configuration.developerConfiguration.featureGates`). */
import { S } from './keys.js';
import type { StoreView } from './runtime.js';
import { arr, rec } from './util.js';

/**
 * Whether a gate is on. A cluster without a KubeVirt CR (a bare test store) counts as "all gates on", so the
 * controllers stay usable; once a KubeVirt CR exists its list is the truth.
 */
export function featureGateEnabled(rt: StoreView, gate: string): boolean {
  const kubevirt = rt.list(S.kubevirts)[0];
  if (!kubevirt) return true;
  const gates = arr(rec(rec(rec(kubevirt.spec).configuration).developerConfiguration).featureGates);
  return gates.includes(gate);
}
