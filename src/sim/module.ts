/**
 * How the embedded cluster is put together: the HTTP apiserver (src/sim/http) owns the wire protocol and the
 * store; everything that plays a cluster component (KubeVirt, CDI, kubelet, metrics-server, consoles, ...) is a
 * SimModule. A module reacts to store events, runs timers on the SimClock, and may contribute HTTP endpoints the
 * real component would serve (subresource verbs, console WebSockets, export downloads, metrics).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SimClock } from './clock.js';
import type { ObjectStore } from './store/object-store.js';
import type { KObject } from './store/types.js';

export type FleetName = 'demo' | 'empty' | number;

export interface SimOptions {
  /** Timing divisor: 1 looks like a real cluster, tests use 20+ to run the same state machines fast. */
  speed: number;
  fleet: FleetName;
  /** metrics.k8s.io served (metrics-server installed). Toggleable at runtime through SimContext.settings. */
  metricsServer: boolean;
  /** What the baseline install leaves out or changes (tests of Corral's doctor start a cluster missing a piece). */
  baseline?: BaselineOptions;
}

export interface BaselineOptions {
  /** The KubeVirt CR's `developerConfiguration.featureGates` (default Snapshot, HotplugVolumes, ExpandDisks, VMExport, LiveMigration). */
  featureGates?: string[];
  /** Seed the VolumeSnapshotClass for the default storage class (default true). */
  snapshotClass?: boolean;
}

/** One container the kubelet starts for real instead of playing a scripted workload (see ContainerRuntime). */
export interface ContainerRun {
  namespace: string;
  pod: string;
  image: string;
  command: string[];
  args: string[];
  /** The container's literal `env` values (valueFrom is not resolved). */
  env: Record<string, string>;
  /**
   * A kubeconfig for the pod's ServiceAccount (the token of its `kubernetes.io/service-account-token` Secret, which
   * stands in for the projected token a real kubelet mounts); undefined when the pod mounts no token or its
   * ServiceAccount has no token Secret.
   */
  kubeconfig?: string;
  /** Appends a line to the container's log (`kubectl logs`). */
  log(line: string): void;
}

/**
 * The embedded cluster runs no container images. A program that starts it may register a runtime for images it can
 * execute itself (Corral registers its own image, so a CronJob's runner pod really performs its run against this
 * apiserver with the pod's ServiceAccount credentials). Return the exit code's promise, or undefined to leave the
 * image to the scripted workloads (storage/workloads.ts).
 */
export type ContainerRuntime = (run: ContainerRun) => Promise<number> | undefined;

export interface SimContext {
  store: ObjectStore;
  clock: SimClock;
  options: SimOptions;
  /** Images the kubelet executes for real (Jobs' pods); see ContainerRuntime. */
  containerRuntime?: ContainerRuntime;
  /** Mutable runtime switches (e.g. metricsServer) the fault/control interface can flip. */
  settings: {
    metricsServer: boolean;
    /** Watch-list (`sendInitialEvents`) served, as with the WatchList gate on (undefined: on). */
    watchList?: boolean;
    /** CDI importers' bandwidth in MiB/s for every HTTP/registry import (undefined: each source's own rate). */
    importMiBps?: number;
  };
  /** The base URL clients reach the apiserver at (e.g. for export links), known once listening. */
  baseUrl(): string;
}

/** `PUT /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{resource}/{name}/{verb}` and friends. */
export interface SubresourceRoute {
  resource: 'virtualmachines' | 'virtualmachineinstances';
  verb: string;
  /** Allowed methods; others get 405 MethodNotAllowed. */
  methods: string[];
  handle(
    ctx: SimContext,
    request: { namespace: string; name: string; method: string; body: unknown; query: URLSearchParams },
  ): SubresourceResult | Promise<SubresourceResult>;
}

/** A subresource answer: status + optional JSON body (an empty 202/200 body when omitted). Errors are thrown ApiErrors. */
export interface SubresourceResult {
  status: number;
  body?: unknown;
}

/** A WebSocket endpoint (VNC, serial console, pod exec). Return true when the upgrade was taken. */
export interface UpgradeRoute {
  matches(url: URL): boolean;
  handle(ctx: SimContext, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void;
}

/** A plain HTTP endpoint outside the Kubernetes REST grammar (e.g. an export's download link). */
export interface RawRoute {
  matches(url: URL, method: string): boolean;
  handle(ctx: SimContext, req: IncomingMessage, res: ServerResponse, url: URL): void | Promise<void>;
}

/** What metrics-server would answer; the apiserver serves it under metrics.k8s.io/v1beta1 when enabled. */
export interface MetricsProvider {
  nodeMetrics(): KObject[];
  podMetrics(namespace?: string): KObject[];
}

/** One API write as an admission webhook sees it (after schema validation, before the store). */
export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  group: string;
  kind: string;
  /** e.g. 'status' for writes through the status subresource. */
  subresource?: string;
  namespace?: string;
  name: string;
  /** The object about to be stored (CREATE/UPDATE); a hook may change it in place (mutating webhook). */
  object?: KObject;
  /** The stored object (UPDATE/DELETE). */
  oldObject?: KObject;
  dryRun: boolean;
}

/**
 * A validating/mutating admission webhook (e.g. KubeVirt's virt-api). Throw an ApiError to deny (KubeVirt answers
 * 422 Invalid for field causes); return warnings to send them as `Warning: 299` headers.
 */
export interface AdmissionHook {
  /** Kinds this hook sees, as `{ group, kind }`. */
  kinds: { group: string; kind: string }[];
  admit(ctx: SimContext, request: AdmissionRequest): { warnings?: string[] } | void;
}

export interface SimModule {
  readonly name: string;
  start(ctx: SimContext): void | Promise<void>;
  stop?(): void | Promise<void>;
  subresources?: SubresourceRoute[];
  upgrades?: UpgradeRoute[];
  rawRoutes?: RawRoute[];
  metrics?: MetricsProvider;
  /** Admission webhooks run by the HTTP layer on create/update/patch/delete of the listed kinds. */
  admission?: AdmissionHook[];
}
