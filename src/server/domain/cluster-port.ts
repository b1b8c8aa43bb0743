/**
 * The cluster as the domain sees it: a watch-driven cache for reads and a handful of verbs for writes. The real
 * implementation lives in src/server/cluster (the only code that imports @kubernetes/client-node); unit tests pass
 * an in-memory one. Keeping this interface small is what lets domain code stay framework-free.
 */

/** A Kubernetes object as raw JSON (what the apiserver sends), with just enough typing to be read safely. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: KMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface KMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  [key: string]: unknown;
}

/** Kinds held in the watch-driven cache (every read of these is served from memory). */
export const CACHED_KINDS = [
  'VirtualMachine',
  'VirtualMachineInstance',
  'Pod',
  'Node',
  'PersistentVolumeClaim',
  'DataVolume',
  'VirtualMachineInstanceMigration',
] as const;
export type CachedKind = (typeof CACHED_KINDS)[number];

/** Every kind Corral reads or writes; the cluster layer holds one descriptor (group/version/plural) per kind. */
export type Kind =
  | CachedKind
  | 'Namespace'
  | 'Secret'
  | 'ConfigMap'
  | 'Service'
  | 'Job'
  | 'StorageClass'
  | 'CSIStorageCapacity'
  | 'VolumeSnapshotClass'
  | 'VirtualMachineSnapshot'
  | 'VirtualMachineRestore'
  | 'VirtualMachineClone'
  | 'VirtualMachineExport'
  | 'VirtualMachineClusterInstancetype'
  | 'VirtualMachineClusterPreference'
  | 'NetworkAttachmentDefinition'
  | 'Event'
  | 'CDIConfig'
  | 'UploadTokenRequest'
  | 'KubeVirt'
  | 'CDI'
  | 'ServiceAccount'
  | 'Role'
  | 'RoleBinding'
  | 'ClusterRole'
  | 'ClusterRoleBinding'
  | 'CronJob'
  | 'Lease';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface ChangeEvent {
  kind: CachedKind;
  type: ChangeType;
  object: KObject;
}

/** Reads from the watch cache. Lookups by index are O(matches), never a scan of the fleet. */
export interface ClusterCache {
  get(kind: CachedKind, namespace: string | undefined, name: string): KObject | undefined;
  list(kind: CachedKind, namespace?: string): readonly KObject[];
  /** VMIs or pods placed on a node. */
  onNode(kind: 'VirtualMachineInstance' | 'Pod', node: string): readonly KObject[];
  /** Objects that belong to a VM: labelled `corral.dev/vm=<vm>`, `kubevirt.io/domain`/`vm.kubevirt.io/name=<vm>`, or owned by it. */
  ofVm(kind: CachedKind, namespace: string, vm: string): readonly KObject[];
  /** Objects carrying a label (any value when `value` is omitted). */
  withLabel(kind: CachedKind, key: string, value?: string): readonly KObject[];
}

export interface ClusterInfo {
  /** A display name for the cluster (kubeconfig cluster name, or "embedded demo cluster"). */
  name: string;
  context: string;
  /** Every context of the kubeconfig (Corral serves one at a time; `--context` picks it). */
  contexts: string[];
  server: string;
  /** True when this is Corral's embedded simulated cluster. */
  demo: boolean;
}

/** CPU and memory in use, as metrics-server measured it. */
export interface ResourceUsage {
  /** Cores in use (e.g. 0.25 = a quarter of one core). */
  cpuCores: number;
  memoryBytes: number;
}

/** Network and disk rates of a pod (bytes/s), from the kubelet's counters; a field the node does not serve is absent. */
export interface IoRates {
  netin?: number;
  netout?: number;
  diskread?: number;
  diskwrite?: number;
}

/** How full a mounted volume is, as its node's kubelet measured it (Summary API `volume[]`). */
export interface VolumeUsage {
  usedBytes: number;
  capacityBytes: number;
}

/**
 * The last metrics.k8s.io sample, held in memory by the cluster layer (refreshed on a timer, never per request).
 * Every reading is undefined while metrics-server is absent or has not answered yet.
 */
export interface MetricsReadings {
  /** One container of a pod, or the sum of its containers when `container` is omitted or not reported. */
  pod(namespace: string, name: string, container?: string): ResourceUsage | undefined;
  node(name: string): ResourceUsage | undefined;
  /** Epoch ms of the last successful sample; 0 when metrics.k8s.io has never answered (or stopped answering). */
  sampledAt(): number;
  /** A pod's network and disk rates over the last interval; undefined until two kubelet readings exist. */
  podIo?(namespace: string, name: string): IoRates | undefined;
  /** A claim's usage from the kubelet that mounts it; undefined while no running pod mounts it or none was read. */
  volume?(namespace: string, claim: string): VolumeUsage | undefined;
  /** Called after every sampling round: `ok` says whether metrics.k8s.io answered. Returns an unsubscribe function. */
  onSample?(listener: (ok: boolean) => void): () => void;
  /** The newest good round as other replicas take it (metrics-share.ts); undefined before one. */
  exportSample?(): SharedSample | undefined;
  /**
   * Takes another replica's round as this process's own (a follower does not sample), then tells the listeners as
   * a round of its own would; `undefined` forgets the readings (the sharing leader went quiet) and reports a failed
   * round.
   */
  importSample?(sample: SharedSample | undefined): void;
}

/** One sampling round in a shareable form: what the leader hands the followers (metrics-share.ts). */
export interface SharedSample {
  /** Epoch ms of the round (sampledAt on the replica that took it). */
  t: number;
  /** `namespace/name` → the pod's total and its containers' usage. */
  pods: Record<string, { total: ResourceUsage; containers: Record<string, ResourceUsage> }>;
  nodes: Record<string, ResourceUsage>;
  /** `namespace/name` of a pod → its network and disk rates. */
  io: Record<string, IoRates>;
  /** `namespace/claim` → its volume usage. */
  volumes: Record<string, VolumeUsage>;
}

export type SubresourceTarget = 'virtualmachines' | 'virtualmachineinstances';

/** One live list answer with the collection's resourceVersion (where a watch of the same list may start). */
export interface ListPage {
  items: KObject[];
  resourceVersion: string;
}

/** How a watch ended: the apiserver closed the stream (resume from the last version), or that version is gone. */
export type WatchEnd = 'closed' | 'expired';

/** One change seen by a watch, with the object's new state (its last state for DELETED). */
export interface WatchChange {
  type: ChangeType;
  object: KObject;
}

/** The apiserver's `GET /version`, with its clock as the answer's Date header gave it. */
export interface ServerVersion {
  gitVersion: string;
  major: string;
  minor: string;
  /** Epoch ms of the answer's Date header (1 s resolution); undefined when the apiserver sent none. */
  serverTime?: number;
  /** Local epoch ms halfway between sending the request and reading the answer (what serverTime is compared with). */
  localTime: number;
}

/** One permission, as a SelfSubjectAccessReview's resourceAttributes spell it ('' is the core group). */
export interface AccessQuery {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  /** One object by name, for rules limited to `resourceNames`. */
  name?: string;
}

export interface AccessAnswer {
  allowed: boolean;
  /** The authorizer's reason or the review's evaluation error, when it gave one. */
  reason?: string;
}

/** One rule of a SelfSubjectRulesReview (what the credentials may do in the namespace asked about). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface RulesReview {
  rules: ResourceRule[];
  /** The authorizers could not list everything (webhooks, ABAC): rules missing here may still be granted. */
  incomplete: boolean;
  evaluationError?: string;
}

export interface ClusterPort {
  readonly info: ClusterInfo;
  readonly cache: ClusterCache;
  /** Resource usage from metrics.k8s.io; absent in clusters (and fakes) that do not sample it. */
  readonly metrics?: MetricsReadings;
  /** True once every informer has listed once; false again when the cluster has been unreachable for long. */
  isReady(): boolean;
  /** Why it is not ready (one line per failing heartbeat or watch); empty when ready. */
  readinessProblems?(): string[];
  /** Subscribe to cache changes (after the cache has applied them). Returns an unsubscribe function. */
  onChange(listener: (event: ChangeEvent) => void): () => void;

  create(kind: Kind, object: KObject): Promise<KObject>;
  /**
   * Server-side apply (application/apply-patch+yaml, field manager `corral`, force): creates the object or makes
   * the fields Corral states its own. The object must carry its name (and namespace when namespaced).
   */
  apply(kind: Kind, object: KObject): Promise<KObject>;
  /** JSON merge patch (application/merge-patch+json). */
  patch(kind: Kind, namespace: string | undefined, name: string, mergePatch: unknown): Promise<KObject>;
  /** Deletes; resolves false when the object did not exist. */
  remove(kind: Kind, namespace: string | undefined, name: string): Promise<boolean>;
  /** Live read (kinds outside the cache); undefined on 404. */
  fetch(kind: Kind, namespace: string | undefined, name: string): Promise<KObject | undefined>;
  /** Live list (kinds outside the cache). */
  fetchList(kind: Kind, options?: { namespace?: string; labelSelector?: string }): Promise<KObject[]>;
  /** Live list with field/label selectors and the collection's resourceVersion (kinds outside the cache: Events). */
  listPage(
    kind: Kind,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string; limit?: number },
  ): Promise<ListPage>;
  /**
   * Watches a collection from `resourceVersion` until the signal aborts (resolves 'closed') or the apiserver ends
   * the stream ('closed': resume from the last version seen) or the version has expired ('expired': list again).
   */
  watch(
    kind: Kind,
    options: { namespace?: string; fieldSelector?: string; labelSelector?: string; resourceVersion: string },
    onChange: (change: WatchChange) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd>;
  /** KubeVirt read subresource: GET /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{target}/{name}/{verb}. */
  readSubresource(target: SubresourceTarget, namespace: string, name: string, verb: string): Promise<unknown>;
  /** `GET /version` and the apiserver's clock (a live request). */
  serverVersion(): Promise<ServerVersion>;
  /** The API groups the apiserver serves (discovery `GET /apis`; the core group is ''). */
  apiGroups(): Promise<string[]>;
  /** A SelfSubjectAccessReview: may the credentials Corral runs with do this? */
  canI(query: AccessQuery): Promise<AccessAnswer>;
  /** A SelfSubjectRulesReview: every rule the credentials Corral runs with hold in `namespace` (absent in fakes). */
  rulesReview?(namespace: string): Promise<RulesReview>;
  /** KubeVirt subresource verb: PUT /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{target}/{name}/{verb}. */
  subresource(target: SubresourceTarget, namespace: string, name: string, verb: string, body?: unknown): Promise<void>;
}
