/** Cluster-wide facts for the UI: capabilities, instancetypes. Storage facts are cached briefly (they rarely change). */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';

/** A kind whose CRD is not installed answers 404: that means "none", while every other failure propagates. */
function absentIsEmpty(err: unknown): KObject[] {
  if (err instanceof CorralError && err.code === 'NOT_FOUND') return [];
  throw err;
}
import { asString } from './vm-facts';

export interface CapabilityFacts {
  storageClass: string;
  canExpand: boolean;
  canSnapshot: boolean;
}

const TTL_MS = 30_000;
let cached: { at: number; cluster: object; facts: CapabilityFacts } | undefined;

/** Drop the cached facts (a doctor fix has just added a VolumeSnapshotClass or changed a class). */
export function invalidateCapabilityFacts(): void {
  cached = undefined;
}

export async function capabilityFacts(deps: DomainDeps): Promise<CapabilityFacts> {
  if (cached && cached.cluster === deps.cluster && Date.now() - cached.at < TTL_MS) return cached.facts;
  const [classes, snapshotClasses] = await Promise.all([
    deps.cluster.fetchList('StorageClass'),
    deps.cluster.fetchList('VolumeSnapshotClass').catch(absentIsEmpty), // CRD absent: no snapshots, not an error
  ]);
  const annotated = (key: string) => classes.find((c) => c.metadata.annotations?.[key] === 'true');
  const def =
    annotated('storageclass.kubevirt.io/is-default-virt-class') ??
    annotated('storageclass.kubernetes.io/is-default-class');
  const facts: CapabilityFacts = {
    storageClass: def?.metadata.name ?? '',
    canExpand: def ? def.allowVolumeExpansion === true : classes.some((c) => c.allowVolumeExpansion === true),
    canSnapshot: snapshotClasses.length > 0,
  };
  cached = { at: Date.now(), cluster: deps.cluster, facts };
  return facts;
}

export async function instanceTypes(deps: DomainDeps): Promise<{ instancetypes: string[]; preferences: string[] }> {
  const names = async (kind: 'VirtualMachineClusterInstancetype' | 'VirtualMachineClusterPreference') =>
    (await deps.cluster.fetchList(kind).catch(absentIsEmpty)).map((o) => asString(o.metadata.name)).sort();
  const [instancetypes, preferences] = await Promise.all([
    names('VirtualMachineClusterInstancetype'),
    names('VirtualMachineClusterPreference'),
  ]);
  return { instancetypes, preferences };
}
