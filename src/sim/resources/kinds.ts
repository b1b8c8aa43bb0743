/**
 * Every resource type the embedded cluster serves: what discovery advertises, which URL grammar applies, which
 * printer columns `kubectl get` shows, and which swagger definition validates the body. Data only — the HTTP
 * layer and the store read it. Names, short names and columns follow the upstream CRDs (kube-sim-spec §2.4, §9).
 */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, ResourceType } from '../store/types.js';

export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

/** One `kubectl get` column. `jsonPath` uses the CRD additionalPrinterColumns subset; `value` computes it in code. */
export interface PrinterColumn {
  name: string;
  type: ColumnType;
  jsonPath?: string;
  value?: (obj: KObject) => unknown;
  description?: string;
  /** 0 = always shown; 1 = only with `-o wide`. */
  priority?: number;
}

export interface KindSpec extends ResourceType {
  /** Columns after Name (Name is always first). Omitted: Name, Age. */
  columns?: PrinterColumn[];
  /** Extra subresources advertised in discovery besides `status` (e.g. pods/log); group/version when the
   * subresource's kind lives elsewhere (deployments/scale is autoscaling/v1 Scale). */
  extraSubresources?: { name: string; verbs: string[]; kind?: string; group?: string; version?: string }[];
  /** Swagger definition key used for fieldValidation (KubeVirt and CDI kinds). */
  schema?: { file: 'kubevirt' | 'cdi'; definition: string };
  /** Field selectors this kind supports besides metadata.name / metadata.namespace. */
  fieldSelectors?: string[];
  /** 'wide': the Name column is shown only with `-o wide`, last (kubectl's event printer). Default: first. */
  nameColumn?: 'first' | 'wide';
  /** CRD-defined kind: gets a CustomResourceDefinition object so kubectl's CRD finder sees it. */
  crd?: boolean;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

interface Def {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  builtin?: boolean;
  aliasVersions?: string[];
  defaultFinalizers?: string[];
  verbs?: string[];
  columns?: PrinterColumn[];
  extraSubresources?: KindSpec['extraSubresources'];
  schema?: KindSpec['schema'];
  fieldSelectors?: string[];
  nameColumn?: 'first' | 'wide';
}

function kind(d: Def): KindSpec {
  const builtin = d.builtin ?? false;
  return {
    group: d.group,
    version: d.version,
    ...(d.aliasVersions ? { aliasVersions: d.aliasVersions } : {}),
    kind: d.kind,
    listKind: `${d.kind}List`,
    plural: d.plural,
    singular: d.kind.toLowerCase(),
    namespaced: d.namespaced,
    ...(d.shortNames ? { shortNames: d.shortNames } : {}),
    ...(d.categories ? { categories: d.categories } : {}),
    verbs: d.verbs ?? ALL_VERBS,
    hasStatus: d.status ?? false,
    builtin,
    ...(d.defaultFinalizers ? { defaultFinalizers: d.defaultFinalizers } : {}),
    ...(d.columns ? { columns: d.columns } : {}),
    ...(d.extraSubresources ? { extraSubresources: d.extraSubresources } : {}),
    ...(d.schema ? { schema: d.schema } : {}),
    ...(d.fieldSelectors ? { fieldSelectors: d.fieldSelectors } : {}),
    ...(d.nameColumn ? { nameColumn: d.nameColumn } : {}),
    crd: !builtin,
  };
}

const core = (d: Omit<Def, 'group' | 'version' | 'builtin'>) => kind({ ...d, group: '', version: 'v1', builtin: true });
const readyCondition = '.status.conditions[?(@.type=="Ready")].status';

/** Core kinds are not schema-validated, so readers must not trust list shapes. */
function list<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** kubectl's NetworkPolicy Pod-Selector column: the matchLabels as k=v, or <none> for all pods. */
function podSelectorText(np: KObject): string {
  const labels = (np.spec as { podSelector?: { matchLabels?: Record<string, string> } } | undefined)?.podSelector
    ?.matchLabels;
  const text = Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return text || '<none>';
}

function podReady(pod: KObject): string {
  const statuses = list<{ ready?: boolean }>(
    (pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses,
  );
  const containers = list((pod.spec as { containers?: unknown } | undefined)?.containers).length;
  return `${statuses.filter((s) => s.ready).length}/${containers}`;
}

function podRestarts(pod: KObject): number {
  const statuses = list<{ restartCount?: number }>(
    (pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses,
  );
  return statuses.reduce((n, s) => n + (typeof s.restartCount === 'number' ? s.restartCount : 0), 0);
}

function podStatus(pod: KObject): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const status = pod.status as
    | { phase?: string; reason?: string; containerStatuses?: { state?: { waiting?: { reason?: string } } }[] }
    | undefined;
  const waiting = list<{ state?: { waiting?: { reason?: string } } }>(status?.containerStatuses).find(
    (s) => s.state?.waiting?.reason,
  )?.state?.waiting?.reason;
  return waiting ?? status?.reason ?? status?.phase ?? 'Pending';
}

function accessModes(pvc: KObject): string {
  const modes = list<string>((pvc.status as { accessModes?: unknown } | undefined)?.accessModes);
  const short: Record<string, string> = {
    ReadWriteOnce: 'RWO',
    ReadOnlyMany: 'ROX',
    ReadWriteMany: 'RWX',
    ReadWriteOncePod: 'RWOP',
  };
  return modes.map((m) => short[m] ?? m).join(',');
}

function nodeRoles(node: KObject): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((l) => l.startsWith('node-role.kubernetes.io/'))
    .map((l) => l.slice('node-role.kubernetes.io/'.length));
  return roles.length ? roles.sort().join(',') : '<none>';
}

function nodeStatus(node: KObject): string {
  const conditions = list<{ type: string; status: string }>(
    (node.status as { conditions?: unknown } | undefined)?.conditions,
  );
  const ready = conditions.find((c) => c.type === 'Ready');
  let s = ready?.status === 'True' ? 'Ready' : 'NotReady';
  if ((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable) s += ',SchedulingDisabled';
  return s;
}

function nodeAddress(type: string) {
  return (node: KObject) =>
    list<{ type: string; address: string }>((node.status as { addresses?: unknown } | undefined)?.addresses).find(
      (a) => a.type === type,
    )?.address ?? '<none>';
}

function servicePorts(svc: KObject): string {
  const ports = list<{ port: number; protocol?: string; nodePort?: number }>(
    (svc.spec as { ports?: unknown } | undefined)?.ports,
  );
  if (!ports.length) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function eventObject(ev: KObject): string {
  const o = ev.involvedObject as { kind?: string; name?: string } | undefined;
  return `${(o?.kind ?? '').toLowerCase()}/${o?.name ?? ''}`;
}

const POD_FIELDS = [
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'status.phase',
  'status.podIP',
  'status.nominatedNodeName',
];
const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

const kv = (d: Omit<Def, 'group' | 'version'> & { version?: string }) =>
  kind({ version: 'v1', ...d, group: 'kubevirt.io', aliasVersions: ['v1alpha3'] });

/** Every kind the apiserver stores, in discovery order. */
export const KINDS: KindSpec[] = [
  // core/v1
  core({
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
    status: true,
    fieldSelectors: ['status.phase'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, age],
  }),
  core({
    kind: 'Node',
    plural: 'nodes',
    namespaced: false,
    shortNames: ['no'],
    status: true,
    fieldSelectors: ['spec.unschedulable'],
    columns: [
      { name: 'Status', type: 'string', value: nodeStatus },
      { name: 'Roles', type: 'string', value: nodeRoles },
      age,
      { name: 'Version', type: 'string', jsonPath: '.status.nodeInfo.kubeletVersion' },
      { name: 'Internal-IP', type: 'string', value: nodeAddress('InternalIP'), priority: 1 },
      { name: 'External-IP', type: 'string', value: nodeAddress('ExternalIP'), priority: 1 },
      { name: 'OS-Image', type: 'string', jsonPath: '.status.nodeInfo.osImage', priority: 1 },
      { name: 'Kernel-Version', type: 'string', jsonPath: '.status.nodeInfo.kernelVersion', priority: 1 },
      { name: 'Container-Runtime', type: 'string', jsonPath: '.status.nodeInfo.containerRuntimeVersion', priority: 1 },
    ],
  }),
  core({
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    fieldSelectors: POD_FIELDS,
    extraSubresources: [
      { name: 'log', verbs: ['get'] },
      { name: 'exec', verbs: ['create', 'get'], kind: 'PodExecOptions' },
    ],
    columns: [
      { name: 'Ready', type: 'string', value: podReady },
      { name: 'Status', type: 'string', value: podStatus },
      { name: 'Restarts', type: 'integer', value: podRestarts },
      age,
      {
        name: 'IP',
        type: 'string',
        value: (p) => (p.status as { podIP?: string } | undefined)?.podIP ?? '<none>',
        priority: 1,
      },
      {
        name: 'Node',
        type: 'string',
        value: (p) => (p.spec as { nodeName?: string } | undefined)?.nodeName ?? '<none>',
        priority: 1,
      },
    ],
  }),
  core({
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
      {
        name: 'External-IP',
        type: 'string',
        value: (s) =>
          list<string>((s.spec as { externalIPs?: unknown } | undefined)?.externalIPs).join(',') || '<none>',
      },
      { name: 'Port(s)', type: 'string', value: servicePorts },
      age,
    ],
  }),
  core({
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
    columns: [
      {
        name: 'Data',
        type: 'integer',
        value: (c) =>
          Object.keys((c.data as object | undefined) ?? {}).length +
          Object.keys((c.binaryData as object | undefined) ?? {}).length,
      },
      age,
    ],
  }),
  core({
    kind: 'Secret',
    plural: 'secrets',
    namespaced: true,
    fieldSelectors: ['type'],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Data', type: 'integer', value: (c) => Object.keys((c.data as object | undefined) ?? {}).length },
      age,
    ],
  }),
  core({
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
    shortNames: ['pvc'],
    status: true,
    defaultFinalizers: ['kubernetes.io/pvc-protection'],
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase' },
      { name: 'Volume', type: 'string', jsonPath: '.spec.volumeName' },
      { name: 'Capacity', type: 'string', jsonPath: '.status.capacity.storage' },
      { name: 'Access Modes', type: 'string', value: accessModes },
      { name: 'StorageClass', type: 'string', jsonPath: '.spec.storageClassName' },
      age,
      { name: 'VolumeMode', type: 'string', jsonPath: '.spec.volumeMode', priority: 1 },
    ],
  }),
  core({
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    namespaced: false,
    shortNames: ['pv'],
    status: true,
    columns: [
      { name: 'Capacity', type: 'string', jsonPath: '.spec.capacity.storage' },
      {
        name: 'Access Modes',
        type: 'string',
        value: (pv) =>
          accessModes({
            ...pv,
            status: { accessModes: (pv.spec as { accessModes?: string[] } | undefined)?.accessModes },
          }),
      },
      { name: 'Reclaim Policy', type: 'string', jsonPath: '.spec.persistentVolumeReclaimPolicy' },
      { name: 'Status', type: 'string', jsonPath: '.status.phase' },
      {
        name: 'Claim',
        type: 'string',
        value: (pv) => {
          const c = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
          return c ? `${c.namespace}/${c.name}` : '';
        },
      },
      { name: 'StorageClass', type: 'string', jsonPath: '.spec.storageClassName' },
      age,
    ],
  }),
  core({
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    fieldSelectors: EVENT_FIELDS,
    nameColumn: 'wide',
    columns: [
      { name: 'Last Seen', type: 'date', jsonPath: '.lastTimestamp' },
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      { name: 'Object', type: 'string', value: eventObject },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  }),
  core({ kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'] }),

  // storage, snapshots
  kind({
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'StorageClass',
    plural: 'storageclasses',
    namespaced: false,
    shortNames: ['sc'],
    builtin: true,
    columns: [
      { name: 'Provisioner', type: 'string', jsonPath: '.provisioner' },
      { name: 'ReclaimPolicy', type: 'string', value: (s) => (s.reclaimPolicy as string | undefined) ?? 'Delete' },
      {
        name: 'VolumeBindingMode',
        type: 'string',
        value: (s) => (s.volumeBindingMode as string | undefined) ?? 'Immediate',
      },
      { name: 'AllowVolumeExpansion', type: 'boolean', value: (s) => s.allowVolumeExpansion === true },
      age,
    ],
  }),
  kind({
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotClass',
    plural: 'volumesnapshotclasses',
    namespaced: false,
    shortNames: ['vsclass', 'vsclasses'],
    columns: [
      { name: 'Driver', type: 'string', jsonPath: '.driver' },
      { name: 'DeletionPolicy', type: 'string', jsonPath: '.deletionPolicy' },
      age,
    ],
  }),
  kind({
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshot',
    plural: 'volumesnapshots',
    namespaced: true,
    shortNames: ['vs'],
    status: true,
    columns: [
      { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse' },
      { name: 'SourcePVC', type: 'string', jsonPath: '.spec.source.persistentVolumeClaimName' },
      { name: 'RestoreSize', type: 'string', jsonPath: '.status.restoreSize' },
      { name: 'SnapshotClass', type: 'string', jsonPath: '.spec.volumeSnapshotClassName' },
      { name: 'SnapshotContent', type: 'string', jsonPath: '.status.boundVolumeSnapshotContentName' },
      age,
    ],
  }),
  kind({
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotContent',
    plural: 'volumesnapshotcontents',
    namespaced: false,
    shortNames: ['vsc', 'vscs'],
    status: true,
    columns: [
      { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse' },
      { name: 'DeletionPolicy', type: 'string', jsonPath: '.spec.deletionPolicy' },
      { name: 'Driver', type: 'string', jsonPath: '.spec.driver' },
      { name: 'VolumeSnapshot', type: 'string', jsonPath: '.spec.volumeSnapshotRef.name' },
      age,
    ],
  }),

  // apiextensions, rbac, batch, apps
  kind({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    status: true,
    builtin: true,
    columns: [{ name: 'Created At', type: 'date', value: (c) => c.metadata.creationTimestamp }],
  }),
  kind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    builtin: true,
  }),
  kind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    builtin: true,
    columns: [
      {
        name: 'Role',
        type: 'string',
        value: (b) => {
          const r = b.roleRef as { kind?: string; name?: string } | undefined;
          return `${r?.kind ?? ''}/${r?.name ?? ''}`;
        },
      },
      age,
    ],
  }),
  kind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'Role',
    plural: 'roles',
    namespaced: true,
    builtin: true,
  }),
  kind({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    builtin: true,
    columns: [
      {
        name: 'Role',
        type: 'string',
        value: (b) => {
          const r = b.roleRef as { kind?: string; name?: string } | undefined;
          return `${r?.kind ?? ''}/${r?.name ?? ''}`;
        },
      },
      age,
    ],
  }),
  kind({
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    categories: ['all'],
    status: true,
    builtin: true,
    columns: [
      {
        name: 'Status',
        type: 'string',
        value: (j) => {
          const s = j.status as { succeeded?: number; failed?: number; active?: number } | undefined;
          return s?.succeeded ? 'Complete' : s?.failed ? 'Failed' : 'Running';
        },
      },
      {
        name: 'Completions',
        type: 'string',
        value: (j) =>
          `${(j.status as { succeeded?: number } | undefined)?.succeeded ?? 0}/${(j.spec as { completions?: number } | undefined)?.completions ?? 1}`,
      },
      age,
    ],
  }),
  kind({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    shortNames: ['cj'],
    namespaced: true,
    categories: ['all'],
    status: true,
    builtin: true,
    columns: [
      {
        name: 'Schedule',
        type: 'string',
        value: (c) => String((c.spec as { schedule?: string } | undefined)?.schedule ?? ''),
      },
      {
        name: 'Suspend',
        type: 'string',
        value: (c) => String((c.spec as { suspend?: boolean } | undefined)?.suspend === true ? 'True' : 'False'),
      },
      {
        name: 'Active',
        type: 'integer',
        value: (c) => ((c.status as { active?: unknown[] } | undefined)?.active ?? []).length,
      },
      {
        name: 'Last Schedule',
        type: 'string',
        value: (c) => String((c.status as { lastScheduleTime?: string } | undefined)?.lastScheduleTime ?? '<none>'),
      },
      age,
    ],
  }),
  kind({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
    builtin: true,
    extraSubresources: [
      { name: 'scale', verbs: ['get', 'patch', 'update'], kind: 'Scale', group: 'autoscaling', version: 'v1' },
    ],
    columns: [
      {
        name: 'Ready',
        type: 'string',
        value: (d) =>
          `${(d.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0}/${(d.spec as { replicas?: number } | undefined)?.replicas ?? 1}`,
      },
      {
        name: 'Up-to-date',
        type: 'integer',
        value: (d) => (d.status as { updatedReplicas?: number } | undefined)?.updatedReplicas ?? 0,
      },
      {
        name: 'Available',
        type: 'integer',
        value: (d) => (d.status as { availableReplicas?: number } | undefined)?.availableReplicas ?? 0,
      },
      age,
    ],
  }),
  kind({
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    builtin: true,
    columns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, age],
  }),
  kind({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    shortNames: ['pdb'],
    status: true,
    builtin: true,
    columns: [
      { name: 'Min Available', type: 'string', jsonPath: '.spec.minAvailable' },
      { name: 'Max Unavailable', type: 'string', jsonPath: '.spec.maxUnavailable' },
      { name: 'Allowed Disruptions', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
      age,
    ],
  }),
  kind({
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    namespaced: true,
    shortNames: ['netpol'],
    builtin: true,
    columns: [{ name: 'Pod-Selector', type: 'string', value: (np) => podSelectorText(np) }, age],
  }),
  kind({
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    shortNames: ['ing'],
    status: true,
    builtin: true,
    columns: [
      {
        name: 'Class',
        type: 'string',
        value: (i) => (i.spec as { ingressClassName?: string } | undefined)?.ingressClassName ?? '<none>',
      },
      {
        name: 'Hosts',
        type: 'string',
        value: (i) =>
          list<{ host?: string }>((i.spec as { rules?: unknown } | undefined)?.rules)
            .map((r) => r.host ?? '*')
            .join(',') || '*',
      },
      age,
    ],
  }),
  kind({
    group: 'k8s.cni.cncf.io',
    version: 'v1',
    kind: 'NetworkAttachmentDefinition',
    plural: 'network-attachment-definitions',
    namespaced: true,
    shortNames: ['net-attach-def'],
  }),

  // KubeVirt
  kv({
    kind: 'VirtualMachine',
    plural: 'virtualmachines',
    namespaced: true,
    shortNames: ['vm', 'vms'],
    categories: ['all'],
    status: true,
    defaultFinalizers: ['kubevirt.io/virtualMachineControllerFinalize'],
    schema: { file: 'kubevirt', definition: 'v1.VirtualMachine' },
    columns: [
      age,
      { name: 'Status', type: 'string', jsonPath: '.status.printableStatus', description: 'Human Readable Status' },
      { name: 'Ready', type: 'string', jsonPath: readyCondition },
    ],
  }),
  kv({
    kind: 'VirtualMachineInstance',
    plural: 'virtualmachineinstances',
    namespaced: true,
    shortNames: ['vmi', 'vmis'],
    categories: ['all'],
    defaultFinalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'],
    schema: { file: 'kubevirt', definition: 'v1.VirtualMachineInstance' },
    columns: [
      age,
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'IP', type: 'string', jsonPath: '.status.interfaces[0].ipAddress' },
      { name: 'NodeName', type: 'string', jsonPath: '.status.nodeName' },
      { name: 'Ready', type: 'string', jsonPath: readyCondition },
      {
        name: 'Live-Migratable',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="LiveMigratable")].status',
        priority: 1,
      },
      { name: 'Paused', type: 'string', jsonPath: '.status.conditions[?(@.type=="Paused")].status', priority: 1 },
    ],
  }),
  kv({
    kind: 'VirtualMachineInstanceMigration',
    plural: 'virtualmachineinstancemigrations',
    namespaced: true,
    shortNames: ['vmim', 'vmims'],
    categories: ['all'],
    status: true,
    defaultFinalizers: ['kubevirt.io/migrationJobFinalize'],
    schema: { file: 'kubevirt', definition: 'v1.VirtualMachineInstanceMigration' },
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'VMI', type: 'string', jsonPath: '.spec.vmiName' },
    ],
  }),
  kv({
    kind: 'KubeVirt',
    plural: 'kubevirts',
    namespaced: true,
    shortNames: ['kv', 'kvs'],
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1.KubeVirt' },
    columns: [age, { name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
  }),
  kind({
    group: 'snapshot.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineSnapshot',
    plural: 'virtualmachinesnapshots',
    namespaced: true,
    shortNames: ['vmsnapshot', 'vmsnapshots'],
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineSnapshot' },
    columns: [
      { name: 'SourceKind', type: 'string', jsonPath: '.spec.source.kind' },
      { name: 'SourceName', type: 'string', jsonPath: '.spec.source.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse' },
      { name: 'CreationTime', type: 'date', jsonPath: '.status.creationTime' },
      { name: 'Error', type: 'string', jsonPath: '.status.error.message' },
    ],
  }),
  kind({
    group: 'snapshot.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineSnapshotContent',
    plural: 'virtualmachinesnapshotcontents',
    namespaced: true,
    shortNames: ['vmsnapshotcontent', 'vmsnapshotcontents'],
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineSnapshotContent' },
    columns: [
      { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse' },
      { name: 'CreationTime', type: 'date', jsonPath: '.status.creationTime' },
      { name: 'Error', type: 'string', jsonPath: '.status.error.message' },
    ],
  }),
  kind({
    group: 'snapshot.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineRestore',
    plural: 'virtualmachinerestores',
    namespaced: true,
    shortNames: ['vmrestore', 'vmrestores'],
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineRestore' },
    columns: [
      { name: 'TargetKind', type: 'string', jsonPath: '.spec.target.kind' },
      { name: 'TargetName', type: 'string', jsonPath: '.spec.target.name' },
      { name: 'Complete', type: 'boolean', jsonPath: '.status.complete' },
      { name: 'RestoreTime', type: 'date', jsonPath: '.status.restoreTime' },
      { name: 'Error', type: 'string', jsonPath: '.status.error.message' },
    ],
  }),
  kind({
    group: 'clone.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineClone',
    plural: 'virtualmachineclones',
    namespaced: true,
    shortNames: ['vmclone', 'vmclones'],
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineClone' },
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'SourceVirtualMachine', type: 'string', jsonPath: '.spec.source.name' },
      { name: 'TargetVirtualMachine', type: 'string', jsonPath: '.spec.target.name' },
    ],
  }),
  kind({
    group: 'export.kubevirt.io',
    version: 'v1',
    kind: 'VirtualMachineExport',
    plural: 'virtualmachineexports',
    namespaced: true,
    shortNames: ['vmexport', 'vmexports'],
    categories: ['all'],
    status: true,
    aliasVersions: ['v1beta1'],
    schema: { file: 'kubevirt', definition: 'v1.VirtualMachineExport' },
    columns: [
      { name: 'SourceKind', type: 'string', jsonPath: '.spec.source.kind' },
      { name: 'SourceName', type: 'string', jsonPath: '.spec.source.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    ],
  }),
  kind({
    group: 'instancetype.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineClusterInstancetype',
    plural: 'virtualmachineclusterinstancetypes',
    namespaced: false,
    shortNames: ['vmclusterinstancetype', 'vmclusterinstancetypes', 'vmcf', 'vmcfs'],
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineClusterInstancetype' },
  }),
  kind({
    group: 'instancetype.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineClusterPreference',
    plural: 'virtualmachineclusterpreferences',
    namespaced: false,
    shortNames: ['vmclusterpref', 'vmclusterprefs', 'vmcp', 'vmcps'],
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineClusterPreference' },
  }),
  kind({
    group: 'instancetype.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachineInstancetype',
    plural: 'virtualmachineinstancetypes',
    namespaced: true,
    shortNames: ['vminstancetype', 'vminstancetypes', 'vmf', 'vmfs'],
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachineInstancetype' },
  }),
  kind({
    group: 'instancetype.kubevirt.io',
    version: 'v1beta1',
    kind: 'VirtualMachinePreference',
    plural: 'virtualmachinepreferences',
    namespaced: true,
    shortNames: ['vmpref', 'vmprefs', 'vmp', 'vmps'],
    schema: { file: 'kubevirt', definition: 'v1beta1.VirtualMachinePreference' },
  }),

  // CDI
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'DataVolume',
    plural: 'datavolumes',
    namespaced: true,
    shortNames: ['dv', 'dvs'],
    categories: ['all'],
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.DataVolume' },
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
      { name: 'Restarts', type: 'integer', jsonPath: '.status.restartCount' },
      age,
    ],
  }),
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'CDI',
    plural: 'cdis',
    namespaced: false,
    shortNames: ['cdi', 'cdis'],
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.CDI' },
    columns: [age, { name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
  }),
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'CDIConfig',
    plural: 'cdiconfigs',
    namespaced: false,
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.CDIConfig' },
  }),
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'StorageProfile',
    plural: 'storageprofiles',
    namespaced: false,
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.StorageProfile' },
  }),
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'DataSource',
    plural: 'datasources',
    namespaced: true,
    shortNames: ['das'],
    categories: ['all'],
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.DataSource' },
  }),
  kind({
    group: 'cdi.kubevirt.io',
    version: 'v1beta1',
    kind: 'DataImportCron',
    plural: 'dataimportcrons',
    namespaced: true,
    shortNames: ['dic', 'dics'],
    categories: ['all'],
    status: true,
    schema: { file: 'cdi', definition: 'v1beta1.DataImportCron' },
  }),
  kind({
    group: 'migrations.kubevirt.io',
    version: 'v1alpha1',
    kind: 'MigrationPolicy',
    plural: 'migrationpolicies',
    namespaced: false,
    categories: ['all'],
    status: true,
    schema: { file: 'kubevirt', definition: 'v1alpha1.MigrationPolicy' },
  }),
];

/** Resource names of `subresources.kubevirt.io/v1` that have no SubresourceRoute (served as WebSocket upgrades). */
export const STREAMING_SUBRESOURCES = ['virtualmachineinstances/console', 'virtualmachineinstances/vnc'];

/** Register every kind with the store (idempotent). */
export function registerKinds(store: ObjectStore): void {
  for (const k of KINDS) store.register(k);
}

/** The spec the store was registered with, including columns and schema (the store's ResourceType view). */
export function kindSpec(store: ObjectStore, group: string, plural: string): KindSpec {
  return store.type(`${group}/${plural}`) as KindSpec;
}

/** The CustomResourceDefinition a real cluster would hold for a CRD-defined kind. */
export function crdFor(k: KindSpec): Record<string, unknown> {
  const versions = [k.version, ...(k.aliasVersions ?? [])].map((v) => ({
    name: v,
    served: true,
    storage: v === k.version,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    ...(k.hasStatus ? { subresources: { status: {} } } : {}),
    ...(k.columns?.some((c) => c.jsonPath)
      ? {
          additionalPrinterColumns: k.columns
            .filter((c) => c.jsonPath)
            .map((c) => ({
              name: c.name,
              type: c.type,
              jsonPath: c.jsonPath!,
              ...(c.priority ? { priority: c.priority } : {}),
            })),
        }
      : {}),
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${k.group}` },
    spec: {
      group: k.group,
      names: {
        plural: k.plural,
        singular: k.singular,
        kind: k.kind,
        listKind: k.listKind,
        ...(k.shortNames ? { shortNames: k.shortNames } : {}),
        ...(k.categories ? { categories: k.categories } : {}),
      },
      scope: k.namespaced ? 'Namespaced' : 'Cluster',
      versions,
    },
    status: {
      conditions: [
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
      acceptedNames: { plural: k.plural, kind: k.kind },
      storedVersions: [k.version],
    },
  };
}
