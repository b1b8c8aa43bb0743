/**
 * Doctor checks of the cluster itself and of Corral's own objects: the apiserver answers (and how its version
 * compares with the kubelets'), its clock against Corral's, metrics-server, Multus and its
 * NetworkAttachmentDefinitions, Corral's namespace (fix: create it) and the `corral-sources` ConfigMap (fix: keep
 * the valid entries, move the broken text to a backup key).
 */
import { CorralError, describeError } from '../errors';
import type { ServerVersion } from './cluster-port';
import type { DomainDeps } from './deps';
import { finding, unreadable, type Finding } from './doctor-types';
import { parseSources, SOURCES_CONFIGMAP, SOURCES_KEY } from './sources';
import { asDict, asString } from './vm-facts';

/** Clock difference (ms) that is a warning, and one that is a failure (tokens, TLS and timestamps go wrong). */
export const CLOCK_WARN_MS = 3_000;
export const CLOCK_FAIL_MS = 60_000;
/** How many minor versions a kubelet may lag its apiserver (Kubernetes' version skew policy). */
const KUBELET_MAX_LAG = 3;

export async function miscChecks(deps: DomainDeps): Promise<Finding[]> {
  const [api, groups, namespace, sources] = await Promise.all([
    apiRows(deps),
    groupRows(deps),
    namespaceRow(deps),
    sourcesRow(deps),
  ]);
  return [...api, ...groups, namespace, sources];
}

async function apiRows(deps: DomainDeps): Promise<Finding[]> {
  const apiBase = { name: 'api', area: 'cluster' as const, title: 'Kubernetes API' };
  const skewBase = { name: 'version-skew', area: 'cluster' as const, title: 'Version skew' };
  const clockBase = { name: 'clock-skew', area: 'cluster' as const, title: 'Clock skew' };
  let v: ServerVersion;
  try {
    v = await deps.cluster.serverVersion();
  } catch (err) {
    const why = `the apiserver at ${deps.cluster.info.server} did not answer: ${describeError(err)}`;
    return [
      finding({ ...apiBase, status: 'fail', message: why }),
      finding({ ...skewBase, status: 'warn', message: 'unknown while the apiserver does not answer' }),
      finding({ ...clockBase, status: 'warn', message: 'unknown while the apiserver does not answer' }),
    ];
  }
  const rows = [
    finding({ ...apiBase, status: 'ok', message: `Kubernetes ${v.gitVersion} answers at ${deps.cluster.info.server}` }),
  ];
  try {
    rows.push(finding({ ...skewBase, ...versionSkew(v, await kubeletVersions(deps)) }));
  } catch (err) {
    rows.push(unreadable(skewBase, 'the nodes', err));
  }
  rows.push(finding({ ...clockBase, ...clockSkew(v) }));
  return rows;
}

/** Read live, like every check, so `corral doctor` needs no watch cache. */
async function kubeletVersions(deps: DomainDeps): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const n of await deps.cluster.fetchList('Node'))
    out.set(asString(n.metadata.name), asString(asDict(asDict(n.status).nodeInfo).kubeletVersion));
  return out;
}

function minorOf(version: string): number | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  return m ? Number(m[2]) : undefined;
}

/** Kubelets newer than the apiserver, or more than three minors older, are outside Kubernetes' skew policy. */
export function versionSkew(
  v: Pick<ServerVersion, 'gitVersion' | 'minor'>,
  kubelets: Map<string, string>,
): { status: 'ok' | 'warn' | 'fail'; message: string } {
  const api = minorOf(v.gitVersion) ?? (Number.parseInt(v.minor, 10) || undefined);
  if (api === undefined) return { status: 'warn', message: `cannot read the apiserver version "${v.gitVersion}"` };
  const outside: string[] = [];
  const behind: string[] = [];
  for (const [node, kubelet] of kubelets) {
    const minor = minorOf(kubelet);
    if (minor === undefined) continue;
    if (minor > api || api - minor > KUBELET_MAX_LAG) outside.push(`${node} (${kubelet})`);
    else if (minor < api) behind.push(`${node} (${kubelet})`);
  }
  if (outside.length)
    return {
      status: 'fail',
      message: `kubelets outside the supported skew of apiserver ${v.gitVersion} (newer, or more than ${KUBELET_MAX_LAG} minors older): ${outside.join(', ')}`,
    };
  if (behind.length)
    return {
      status: 'warn',
      message: `kubelets older than apiserver ${v.gitVersion} (supported): ${behind.join(', ')}`,
    };
  return {
    status: 'ok',
    message: kubelets.size
      ? `all ${kubelets.size} kubelets match apiserver ${v.gitVersion}`
      : `apiserver ${v.gitVersion}; no nodes to compare`,
  };
}

/** The apiserver's Date header against Corral's clock (1 s resolution, so up to ~1 s reads as no skew). */
export function clockSkew(v: Pick<ServerVersion, 'serverTime' | 'localTime'>): {
  status: 'ok' | 'warn' | 'fail';
  message: string;
} {
  if (v.serverTime === undefined)
    return { status: 'warn', message: 'the apiserver sent no Date header: clock skew unknown' };
  const skew = v.localTime - v.serverTime;
  const seconds = Math.abs(skew) / 1000;
  const direction = skew > 0 ? 'ahead of' : 'behind';
  const text = `Corral's clock is ${seconds.toFixed(1)} s ${direction} the apiserver's`;
  if (Math.abs(skew) >= CLOCK_FAIL_MS) return { status: 'fail', message: `${text}: fix NTP on one of them` };
  if (Math.abs(skew) >= CLOCK_WARN_MS) return { status: 'warn', message: `${text}: check NTP` };
  return { status: 'ok', message: `within ${Math.max(1, Math.ceil(seconds))} s of the apiserver` };
}

async function groupRows(deps: DomainDeps): Promise<Finding[]> {
  const metricsBase = {
    name: 'metrics-server',
    area: 'cluster' as const,
    title: 'metrics-server',
    affects: ['metrics' as const],
  };
  const multusBase = { name: 'multus', area: 'network' as const, title: 'Multus', affects: ['networks' as const] };
  let groups: Set<string>;
  try {
    groups = new Set(await deps.cluster.apiGroups());
  } catch (err) {
    return [unreadable(metricsBase, 'the API groups', err), unreadable(multusBase, 'the API groups', err)];
  }
  const rows: Finding[] = [];
  if (groups.has('metrics.k8s.io')) {
    const at = deps.cluster.metrics?.sampledAt() ?? 0;
    rows.push(
      finding({
        ...metricsBase,
        status: 'ok',
        message: at
          ? `metrics.k8s.io is served; last sample ${new Date(at).toISOString()}`
          : 'metrics.k8s.io is served',
      }),
    );
  } else
    rows.push(
      finding({
        ...metricsBase,
        status: 'warn',
        warnTurnsOff: true,
        message: 'metrics.k8s.io is not served (metrics-server is not installed): no CPU and memory usage or graphs',
      }),
    );
  if (!groups.has('k8s.cni.cncf.io')) {
    rows.push(
      finding({
        ...multusBase,
        status: 'warn',
        warnTurnsOff: true,
        message: 'Multus is not installed (no k8s.cni.cncf.io API): VMs get the pod network only, no bridged NICs',
      }),
    );
    return rows;
  }
  try {
    const nads = await deps.cluster.fetchList('NetworkAttachmentDefinition');
    rows.push(
      finding({
        ...multusBase,
        status: nads.length ? 'ok' : 'warn',
        warnTurnsOff: true,
        message: nads.length
          ? `${nads.length} NetworkAttachmentDefinition(s): ${nads
              .slice(0, 5)
              .map((n) => `${n.metadata.namespace}/${n.metadata.name}`)
              .join(', ')}${nads.length > 5 ? ', …' : ''}`
          : 'Multus is installed but there is no NetworkAttachmentDefinition: VMs can only use the pod network',
      }),
    );
  } catch (err) {
    rows.push(unreadable(multusBase, 'NetworkAttachmentDefinitions', err));
  }
  return rows;
}

async function namespaceRow(deps: DomainDeps): Promise<Finding> {
  const ns = deps.config.defaultNamespace;
  const base = { name: 'namespace', area: 'corral' as const, title: 'Default namespace', affects: ['create' as const] };
  try {
    const obj = await deps.cluster.fetch('Namespace', undefined, ns);
    if (obj?.metadata.deletionTimestamp)
      return finding({ ...base, status: 'fail', message: `namespace ${ns} is being deleted: wait, then fix` });
    if (obj) return finding({ ...base, status: 'ok', message: `namespace ${ns} exists` });
  } catch (err) {
    return unreadable(base, `namespace ${ns}`, err);
  }
  return finding({
    ...base,
    status: 'fail',
    message: `namespace ${ns} (CORRAL_NAMESPACE) does not exist: new VMs and Corral's ConfigMaps go there`,
    fix: `create namespace ${ns}`,
    apply: async (changed) => {
      try {
        await deps.cluster.create('Namespace', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns, labels: { 'app.kubernetes.io/managed-by': 'corral' } },
        });
      } catch (err) {
        if (err instanceof CorralError && err.code === 'CONFLICT') return; // created meanwhile: nothing changed
        throw err;
      }
      changed(`created namespace ${ns}`);
    },
  });
}

/** Why the sources JSON is invalid, or undefined when it is a well-formed list. */
export function sourcesProblem(json: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    return `${SOURCES_KEY} is not valid JSON (${describeError(err)})`;
  }
  if (!Array.isArray(parsed)) return `${SOURCES_KEY} is not a JSON array`;
  const bad = parsed.length - parseSources(json).length;
  return bad ? `${bad} of ${parsed.length} entries of ${SOURCES_KEY} are malformed` : undefined;
}

/** A backup key for the broken text: `sources.json.bak-20261201T211500Z` (ConfigMap keys allow no colons). */
export function backupKey(now: Date): string {
  return `${SOURCES_KEY}.bak-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

async function sourcesRow(deps: DomainDeps): Promise<Finding> {
  const ns = deps.config.defaultNamespace;
  const base = { name: 'sources-configmap', area: 'corral' as const, title: 'Image sources ConfigMap' };
  let cm;
  try {
    cm = await deps.cluster.fetch('ConfigMap', ns, SOURCES_CONFIGMAP);
  } catch (err) {
    return unreadable(base, `ConfigMap ${ns}/${SOURCES_CONFIGMAP}`, err);
  }
  const json = (cm?.data as Record<string, string> | undefined)?.[SOURCES_KEY];
  if (!cm || json === undefined)
    return finding({
      ...base,
      status: 'ok',
      message: `no custom image sources (${ns}/${SOURCES_CONFIGMAP} is absent)`,
    });
  const problem = sourcesProblem(json);
  if (!problem)
    return finding({
      ...base,
      status: 'ok',
      message: `${parseSources(json).length} custom image source(s), all valid`,
    });
  const keep = parseSources(json);
  return finding({
    ...base,
    status: 'fail',
    message: `${ns}/${SOURCES_CONFIGMAP}: ${problem}; the catalog ignores what it cannot read`,
    fix: `rewrite ${SOURCES_KEY} with the ${keep.length} valid entr${keep.length === 1 ? 'y' : 'ies'} and keep the current text under a ${SOURCES_KEY}.bak-… key`,
    apply: async (changed) => {
      const current = await deps.cluster.fetch('ConfigMap', ns, SOURCES_CONFIGMAP);
      const text = (current?.data as Record<string, string> | undefined)?.[SOURCES_KEY];
      if (!current || text === undefined || !sourcesProblem(text)) return;
      const valid = parseSources(text);
      const key = backupKey(new Date());
      // The resourceVersion makes a concurrent edit a 409 instead of being overwritten.
      await deps.cluster.patch('ConfigMap', ns, SOURCES_CONFIGMAP, {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        data: { [SOURCES_KEY]: JSON.stringify(valid, null, 2), [key]: text },
      });
      changed(`copied the broken ${SOURCES_KEY} of ${ns}/${SOURCES_CONFIGMAP} to key ${key}`);
      changed(`rewrote ${SOURCES_KEY} with ${valid.length} valid entr${valid.length === 1 ? 'y' : 'ies'}`);
    },
  });
}
