/** The cluster-wide KubeVirt configuration controllers and verbs consult (the `kubevirt/kubevirt` CR). */
import type { ObjectStore } from '../store/object-store.js';
import { K } from './keys.js';
import { dig, serves } from './objects.js';

export interface KubevirtConfig {
  rolloutStrategy: 'LiveUpdate' | 'Stage';
  featureGates: Set<string>;
}

export function kubevirtConfig(store: ObjectStore): KubevirtConfig {
  const cr = serves(store, K.kubevirts) ? store.list(K.kubevirts, 'kubevirt')[0] : undefined;
  const strategy = dig(cr, 'spec', 'configuration', 'vmRolloutStrategy');
  const gates = dig(cr, 'spec', 'configuration', 'developerConfiguration', 'featureGates');
  const disabled = dig(cr, 'spec', 'configuration', 'developerConfiguration', 'disabledFeatureGates');
  const enabled = new Set(Array.isArray(gates) ? gates.map(String) : []);
  // Beta gates are on unless explicitly disabled (KubeVirt's IsEnabled); HotplugVolumes is GA-equivalent here.
  for (const beta of [
    'DeclarativeHotplugVolumes',
    'HotplugVolumes',
    'LiveMigration',
    'Snapshot',
    'VMExport',
    'VolumeMigration',
    'VolumesUpdateStrategy',
  ]) {
    if (!(Array.isArray(disabled) && disabled.includes(beta))) enabled.add(beta);
  }
  return { rolloutStrategy: strategy === 'Stage' ? 'Stage' : 'LiveUpdate', featureGates: enabled };
}
