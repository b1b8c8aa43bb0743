/**
 * The ClusterPort over a real (or embedded) apiserver: reads from the WatchCache, writes through KubeHttp with
 * JSON merge patches (`application/merge-patch+json`, client-node's PatchStrategy.MergePatch — its default
 * json-patch content type is wrong for a merge body) and KubeVirt subresource PUTs. Kinds outside the cache (Events)
 * are read with live lists and per-caller watches (`listPage`, `watch`), which end when their caller goes.
 */
import { type KubeConfig, PatchStrategy } from '@kubernetes/client-node';
import type {
  AccessAnswer,
  AccessQuery,
  ResourceRule,
  RulesReview,
  ChangeEvent,
  ClusterInfo,
  ClusterPort,
  Kind,
  KObject,
  ListPage,
  ServerVersion,
  SubresourceTarget,
  WatchChange,
  WatchEnd,
} from '../domain/cluster-port';
import { CorralError } from '../errors';
import { KubeHttp } from './kube-http';
import { MetricsSampler } from './metrics-sampler';
import { LineSplitter } from './ndjson';
import type { RateLimit } from './rate-limiter';
import { fromKubeResponse } from './errors';
import { apiVersionOf, RESOURCES, resourcePath, subresourcePath } from './resources';
import { WatchCache, type WatchCacheOptions } from './watch-cache';

export interface KubeClusterOptions extends WatchCacheOptions {
  /** Shown in the UI and /api/capabilities. */
  name?: string;
  demo?: boolean;
  /** Per-request timeout for writes and live reads (default 5 s: a UI request must fail fast, not hang). */
  requestTimeoutMs?: number;
  /** How often metrics.k8s.io is sampled (default 15 s, metrics-server's own resolution). */
  metricsIntervalMs?: number;
  /** Client-side rate limit shared by every request to this cluster (default 50 QPS, burst 100). */
  rateLimit?: RateLimit;
}

function describe(kind: Kind, namespace: string | undefined, name?: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name ?? ''}`.trim();
}

export class KubeCluster implements ClusterPort {
  readonly info: ClusterInfo;
  readonly cache: WatchCache;
  readonly http: KubeHttp;
  readonly metrics: MetricsSampler;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: KubeClusterOptions = {},
  ) {
    this.http = new KubeHttp(kubeConfig, options.requestTimeoutMs ?? 5_000, options.rateLimit);
    this.cache = new WatchCache(this.http, options);
    this.metrics = new MetricsSampler(this.http, options.metricsIntervalMs);
    const context = kubeConfig.getCurrentContext();
    const cluster = kubeConfig.getCurrentCluster();
    this.info = {
      name: options.name ?? cluster?.name ?? context,
      context,
      contexts: kubeConfig.getContexts().map((c) => c.name),
      server: cluster?.server ?? '',
      demo: options.demo ?? false,
    };
  }

  /** Starts the informers and the metrics sampler, and waits (bounded) for the first full list. */
  async start(syncTimeoutMs = 60_000): Promise<void> {
    await this.cache.start();
    this.metrics.start();
    await this.cache.waitForSync(syncTimeoutMs);
  }

  async stop(): Promise<void> {
    this.metrics.stop();
    await this.cache.stop();
    await this.http.close();
  }

  /**
   * What /readyz reports: the cache has listed every kind, and neither the apiserver heartbeat nor any watch has
   * been down for longer than the grace period (`unreachableAfterMs`, default 30 s). See watch-cache.ts.
   */
  isReady(): boolean {
    return this.cache.ready();
  }

  /** Why the cluster is not ready (empty when it is): one entry per failing heartbeat or watch. */
  readinessProblems(): string[] {
    return this.cache.problems();
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    return this.cache.onChange(listener);
  }

  async create(kind: Kind, object: KObject): Promise<KObject> {
    const r = RESOURCES[kind];
    const body = { ...object, apiVersion: apiVersionOf(r), kind };
    return this.http.request<KObject>({
      method: 'POST',
      path: resourcePath(r, object.metadata.namespace),
      body,
      what: `creating ${describe(kind, object.metadata.namespace, object.metadata.name)}`,
    });
  }

  async apply(kind: Kind, object: KObject): Promise<KObject> {
    const r = RESOURCES[kind];
    const { namespace, name } = object.metadata;
    // JSON is YAML, so the applied configuration travels as JSON under the apply content type (as kubectl does).
    return this.http.request<KObject>({
      method: 'PATCH',
      path: `${resourcePath(r, namespace, name)}?fieldManager=corral&force=true`,
      body: { ...object, apiVersion: apiVersionOf(r), kind },
      contentType: 'application/apply-patch+yaml',
      what: `applying ${describe(kind, namespace, name)}`,
    });
  }

  async patch(kind: Kind, namespace: string | undefined, name: string, mergePatch: unknown): Promise<KObject> {
    return this.http.request<KObject>({
      method: 'PATCH',
      path: resourcePath(RESOURCES[kind], namespace, name),
      body: mergePatch,
      contentType: PatchStrategy.MergePatch,
      what: `patching ${describe(kind, namespace, name)}`,
    });
  }

  async remove(kind: Kind, namespace: string | undefined, name: string): Promise<boolean> {
    try {
      // Background propagation: owned objects (VMIs, launcher pods, DV-owned PVCs) go with their owner.
      await this.http.request({
        method: 'DELETE',
        path: `${resourcePath(RESOURCES[kind], namespace, name)}?propagationPolicy=Background`,
        what: `deleting ${describe(kind, namespace, name)}`,
      });
      return true;
    } catch (err) {
      if (err instanceof CorralError && err.code === 'NOT_FOUND') return false;
      throw err;
    }
  }

  async fetch(kind: Kind, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    if (!name) return undefined;
    try {
      return await this.http.request<KObject>({
        method: 'GET',
        path: resourcePath(RESOURCES[kind], namespace, name),
        what: `reading ${describe(kind, namespace, name)}`,
      });
    } catch (err) {
      if (err instanceof CorralError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  }

  async fetchList(kind: Kind, options: { namespace?: string; labelSelector?: string } = {}): Promise<KObject[]> {
    const query = options.labelSelector ? `?labelSelector=${encodeURIComponent(options.labelSelector)}` : '';
    const list = await this.http.request<{ items?: KObject[] }>({
      method: 'GET',
      path: `${resourcePath(RESOURCES[kind], options.namespace)}${query}`,
      what: `listing ${RESOURCES[kind].plural}`,
    });
    return list?.items ?? [];
  }

  async subresource(
    target: SubresourceTarget,
    namespace: string,
    name: string,
    verb: string,
    body?: unknown,
  ): Promise<void> {
    await this.http.request({
      method: 'PUT',
      path: subresourcePath(target, namespace, name, verb),
      body: body ?? {},
      what: `${verb} on ${target === 'virtualmachines' ? 'VM' : 'VMI'} ${namespace}/${name}`,
    });
  }

  async listPage(
    kind: Kind,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string; limit?: number },
  ): Promise<ListPage> {
    const query = new URLSearchParams();
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
    if (options.limit) query.set('limit', String(options.limit));
    const q = query.toString();
    const list = await this.http.request<{ items?: KObject[]; metadata?: { resourceVersion?: string } }>({
      method: 'GET',
      path: `${resourcePath(RESOURCES[kind], options.namespace)}${q ? `?${q}` : ''}`,
      what: `listing ${RESOURCES[kind].plural}`,
    });
    return { items: list?.items ?? [], resourceVersion: list?.metadata?.resourceVersion ?? '' };
  }

  async watch(
    kind: Kind,
    options: { namespace?: string; fieldSelector?: string; labelSelector?: string; resourceVersion: string },
    onChange: (change: WatchChange) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    const r = RESOURCES[kind];
    const what = `watching ${r.plural}`;
    // The apiserver ends the stream after timeoutSeconds; the caller resumes from the last version it saw.
    const query = new URLSearchParams({
      watch: 'true',
      resourceVersion: options.resourceVersion,
      timeoutSeconds: '300',
    });
    if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (signal.aborted) return 'closed';
    let res;
    try {
      res = await this.http.stream(`${resourcePath(r, options.namespace)}?${query}`, signal, what);
    } catch (err) {
      if (signal.aborted) return 'closed';
      throw err;
    }
    if (res.status === 410) return 'expired';
    if (res.status !== 200) {
      const text = res.body ? await new Response(res.body).text().catch(() => '') : '';
      throw fromKubeResponse(res.status, text, what);
    }
    if (!res.body) return 'closed';
    const reader = res.body.getReader();
    const lines = new LineSplitter();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'closed';
        for (const line of lines.push(value)) {
          let event: { type?: string; object?: KObject & { code?: number; message?: string } };
          try {
            event = JSON.parse(line) as typeof event;
          } catch {
            continue;
          }
          const { type, object } = event;
          if (!object) continue;
          if (type === 'ERROR') {
            if (object.code === 410) return 'expired';
            throw new CorralError('BAD_GATEWAY', `the ${r.plural} watch failed: ${object.message ?? 'ERROR event'}`);
          }
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') onChange({ type, object });
        }
      }
    } catch (err) {
      if (signal.aborted) return 'closed';
      throw err instanceof CorralError
        ? err
        : new CorralError(
            'UNAVAILABLE',
            `the ${r.plural} watch broke off (${err instanceof Error ? err.message : String(err)})`,
          );
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  async readSubresource(target: SubresourceTarget, namespace: string, name: string, verb: string): Promise<unknown> {
    return this.http.request({
      method: 'GET',
      path: subresourcePath(target, namespace, name, verb),
      what: `reading ${verb} of ${target === 'virtualmachines' ? 'VM' : 'VMI'} ${namespace}/${name}`,
    });
  }

  async serverVersion(): Promise<ServerVersion> {
    const sent = Date.now();
    let date: string | undefined;
    const v = await this.http.request<{ gitVersion?: string; major?: string; minor?: string }>({
      method: 'GET',
      path: '/version',
      what: 'reading the apiserver version',
      onHeaders: (h) => (date = h['date']),
    });
    const localTime = Math.round((sent + Date.now()) / 2);
    const serverTime = date ? Date.parse(date) : NaN;
    return {
      gitVersion: v?.gitVersion ?? '',
      major: v?.major ?? '',
      minor: v?.minor ?? '',
      localTime,
      ...(Number.isFinite(serverTime) ? { serverTime } : {}),
    };
  }

  async apiGroups(): Promise<string[]> {
    const list = await this.http.request<{ groups?: { name?: string }[] }>({
      method: 'GET',
      path: '/apis',
      what: 'reading the API groups',
    });
    return ['', ...(list?.groups ?? []).map((g) => g.name ?? '').filter(Boolean)];
  }

  async canI(query: AccessQuery): Promise<AccessAnswer> {
    const review = await this.http.request<{
      status?: { allowed?: boolean; reason?: string; evaluationError?: string };
    }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { ...query } },
      },
      what: `asking whether Corral may ${query.verb} ${query.resource}`,
    });
    const reason = review?.status?.reason || review?.status?.evaluationError;
    return { allowed: review?.status?.allowed === true, ...(reason ? { reason } : {}) };
  }

  async rulesReview(namespace: string): Promise<RulesReview> {
    const review = await this.http.request<{
      status?: { resourceRules?: ResourceRule[]; incomplete?: boolean; evaluationError?: string };
    }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } },
      what: "listing Corral's permissions",
    });
    const error = review?.status?.evaluationError;
    return {
      rules: review?.status?.resourceRules ?? [],
      incomplete: review?.status?.incomplete === true,
      ...(error ? { evaluationError: error } : {}),
    };
  }
}
