/**
 * Doctor checks for KubeVirt and CDI: each installed and healthy (their CR's phase and Available/Degraded
 * conditions), and each KubeVirt feature gate Corral uses, with the features it gates. The gate fix merges the
 * missing gate into `spec.configuration.developerConfiguration.featureGates` — keeping every gate already listed —
 * under a resourceVersion precondition, and retries on a fresh read when someone else changed the CR meanwhile.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { finding, listOrAbsent, unreadable, type Feature, type Finding } from './doctor-types';
import { asArray, asDict, asString } from './vm-facts';

export interface GateSpec {
  gate: string;
  /** Other gate names that switch the same feature on (newer KubeVirt renamed some). */
  alternatives?: string[];
  name: string;
  affects: Feature[];
  /** What Corral loses while the gate is off. */
  loses: string;
  /** Status while it is off: fail when a Corral control stops working, warn when it only degrades. */
  whenOff: 'fail' | 'warn';
}

export const GATES: GateSpec[] = [
  {
    gate: 'Snapshot',
    name: 'gate-snapshot',
    affects: ['snapshots'],
    loses: 'VM snapshots, rollback and clones',
    whenOff: 'fail',
  },
  {
    gate: 'HotplugVolumes',
    alternatives: ['DeclarativeHotplugVolumes'],
    name: 'gate-hotplugvolumes',
    affects: ['hotplug'],
    loses: 'adding and removing disks of a running VM',
    whenOff: 'fail',
  },
  {
    gate: 'ExpandDisks',
    name: 'gate-expanddisks',
    affects: [],
    loses: 'a running VM seeing a grown disk without a restart',
    whenOff: 'warn',
  },
  {
    gate: 'VMExport',
    name: 'gate-vmexport',
    affects: ['export'],
    loses: 'disk backups (Download / export)',
    whenOff: 'fail',
  },
];

const MAX_ATTEMPTS = 5;

function developerConfiguration(cr: KObject): Record<string, unknown> {
  return asDict(asDict(asDict(cr.spec).configuration).developerConfiguration);
}

/** The gates the CR switches on: listed in featureGates and not in disabledFeatureGates. */
export function enabledGates(cr: KObject): Set<string> {
  const dev = developerConfiguration(cr);
  const disabled = new Set(asArray(dev.disabledFeatureGates).map(asString));
  return new Set(
    asArray(dev.featureGates)
      .map(asString)
      .filter((g) => g && !disabled.has(g)),
  );
}

function gateOn(enabled: Set<string>, spec: GateSpec): boolean {
  return [spec.gate, ...(spec.alternatives ?? [])].some((g) => enabled.has(g));
}

function condition(cr: KObject, type: string): { status: string; message: string } | undefined {
  const c = asArray(asDict(cr.status).conditions)
    .map(asDict)
    .find((x) => x.type === type);
  return c ? { status: asString(c.status), message: asString(c.message) } : undefined;
}

/** Installed-and-healthy row for the KubeVirt or CDI CR. */
function operatorRow(
  name: 'kubevirt' | 'cdi',
  title: string,
  crs: KObject[] | 'absent',
  version: (cr: KObject) => string,
  affects: Feature[],
): Finding {
  const base = { name, area: 'kubevirt' as const, title, affects };
  if (crs === 'absent' || crs.length === 0)
    return finding({
      ...base,
      status: 'fail',
      message:
        crs === 'absent'
          ? `${title} is not installed (its API is not served)`
          : `${title}'s API is served but no ${name === 'kubevirt' ? 'KubeVirt' : 'CDI'} CR exists: the operator has not deployed it`,
    });
  const cr = crs[0]!;
  const phase = asString(asDict(cr.status).phase) || 'unknown';
  const available = condition(cr, 'Available');
  const degraded = condition(cr, 'Degraded');
  const v = version(cr);
  const where = `${cr.metadata.namespace ? `${cr.metadata.namespace}/` : ''}${cr.metadata.name}`;
  if (phase !== 'Deployed')
    return finding({
      ...base,
      status: 'fail',
      message: `${title} ${where} is ${phase}${available?.message ? `: ${available.message}` : ''}`,
    });
  if (degraded?.status === 'True')
    return finding({ ...base, status: 'warn', message: `${title} ${where} is degraded: ${degraded.message}` });
  if (available && available.status !== 'True')
    return finding({ ...base, status: 'warn', message: `${title} ${where} is not available: ${available.message}` });
  return finding({ ...base, status: 'ok', message: `${title}${v ? ` ${v}` : ''} is deployed and available` });
}

export async function kubevirtChecks(deps: DomainDeps): Promise<Finding[]> {
  const rows: Finding[] = [];
  let kubevirts: KObject[] | 'absent' | undefined;
  try {
    kubevirts = await listOrAbsent(() => deps.cluster.fetchList('KubeVirt'));
    rows.push(
      operatorRow('kubevirt', 'KubeVirt', kubevirts, (cr) => asString(asDict(cr.status).observedKubeVirtVersion), [
        'create',
      ]),
    );
  } catch (err) {
    rows.push(unreadable({ name: 'kubevirt', area: 'kubevirt', title: 'KubeVirt' }, 'the KubeVirt CR', err));
  }
  try {
    const cdis = await listOrAbsent(() => deps.cluster.fetchList('CDI'));
    rows.push(operatorRow('cdi', 'CDI', cdis, (cr) => asString(asDict(cr.status).observedVersion), ['imports']));
  } catch (err) {
    rows.push(unreadable({ name: 'cdi', area: 'kubevirt', title: 'CDI' }, 'the CDI CR', err));
  }
  for (const spec of GATES) rows.push(gateRow(deps, spec, kubevirts));
  return rows;
}

function gateRow(deps: DomainDeps, spec: GateSpec, kubevirts: KObject[] | 'absent' | undefined): Finding {
  const base = {
    name: spec.name,
    area: 'kubevirt' as const,
    title: `${spec.gate} feature gate`,
    affects: spec.affects,
  };
  if (kubevirts === undefined)
    return finding({ ...base, status: 'warn', message: 'the KubeVirt CR could not be read, so its gates are unknown' });
  const cr = kubevirts === 'absent' ? undefined : kubevirts[0];
  if (!cr) return finding({ ...base, status: 'fail', message: `KubeVirt is not installed: no ${spec.loses}` });
  if (gateOn(enabledGates(cr), spec)) return finding({ ...base, status: 'ok', message: `on: ${spec.loses} work` });
  const ref = { namespace: cr.metadata.namespace, name: asString(cr.metadata.name) };
  return finding({
    ...base,
    status: spec.whenOff,
    message: `the KubeVirt ${spec.gate} feature gate is off: no ${spec.loses}`,
    fix: `add ${spec.gate} to spec.configuration.developerConfiguration.featureGates of KubeVirt ${ref.namespace}/${ref.name} (the gates already listed stay)`,
    apply: (changed) => enableGate(deps, ref, spec.gate, changed),
  });
}

/**
 * Adds `gate` to the KubeVirt CR's featureGates (and drops it from disabledFeatureGates), preserving every other
 * entry. The patch carries the read resourceVersion, so a concurrent edit is a 409 and the merge is redone on it.
 */
export async function enableGate(
  deps: DomainDeps,
  ref: { namespace: string | undefined; name: string },
  gate: string,
  changed: (line: string) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const cr = await deps.cluster.fetch('KubeVirt', ref.namespace, ref.name);
    if (!cr) throw new CorralError('NOT_FOUND', `KubeVirt ${ref.namespace}/${ref.name} is gone`);
    const dev = developerConfiguration(cr);
    const gates = asArray(dev.featureGates).map(asString).filter(Boolean);
    const disabled = asArray(dev.disabledFeatureGates).map(asString).filter(Boolean);
    if (gates.includes(gate) && !disabled.includes(gate)) return;
    const patchDev: Record<string, unknown> = { featureGates: gates.includes(gate) ? gates : [...gates, gate] };
    if (disabled.includes(gate)) patchDev.disabledFeatureGates = disabled.filter((g) => g !== gate);
    try {
      await deps.cluster.patch('KubeVirt', ref.namespace, ref.name, {
        metadata: { resourceVersion: cr.metadata.resourceVersion },
        spec: { configuration: { developerConfiguration: patchDev } },
      });
    } catch (err) {
      if (err instanceof CorralError && err.code === 'CONFLICT' && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
    const list = (patchDev.featureGates as string[]).join(', ');
    changed(`enabled feature gate ${gate} on KubeVirt ${ref.namespace}/${ref.name} (featureGates now: ${list})`);
    if (patchDev.disabledFeatureGates)
      changed(`removed ${gate} from disabledFeatureGates of KubeVirt ${ref.namespace}/${ref.name}`);
    return;
  }
}
