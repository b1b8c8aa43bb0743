/**
 * An in-memory ClusterPort for unit tests of domain code: objects live in maps, writes emit change events like the
 * watch cache would, and every write is recorded so tests can assert exactly what was sent.
 */
import type {
  AccessAnswer,
  AccessQuery,
  CachedKind,
  ChangeEvent,
  ClusterCache,
  ClusterPort,
  Kind,
  KObject,
  ListPage,
  ServerVersion,
  SubresourceTarget,
  WatchChange,
  WatchEnd,
} from '../domain/cluster-port';
import { CACHED_KINDS } from '../domain/cluster-port';
import { CorralError } from '../errors';

const isCached = (k: Kind): k is CachedKind => (CACHED_KINDS as readonly string[]).includes(k);
const key = (ns: string | undefined, name: string) => (ns ? `${ns}/${name}` : name);

export function makeVm(name: string, namespace = 'tailvm', extra: Partial<KObject> = {}): KObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      creationTimestamp: '2026-11-30T10:00:00Z',
      ...(extra.metadata ?? {}),
    },
    spec: {
      runStrategy: 'Halted',
      template: {
        spec: {
          domain: {
            cpu: { sockets: 2 },
            memory: { guest: '4Gi' },
            devices: { disks: [{ name: 'rootdisk', disk: {} }] },
          },
          volumes: [{ name: 'rootdisk', containerDisk: { image: 'x' } }],
        },
      },
      ...(extra.spec ?? {}),
    },
    status: { printableStatus: 'Stopped', ...(extra.status ?? {}) },
  };
}

export function makeVmi(name: string, namespace = 'tailvm', status: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace },
    status: { phase: 'Running', nodeName: 'corral-1', interfaces: [{ ipAddress: '10.0.0.5' }], ...status },
  };
}

export class FakeCluster implements ClusterPort {
  readonly info = { name: 'fake', context: 'fake', contexts: ['fake'], server: 'http://fake', demo: true };
  readonly objects = new Map<Kind, Map<string, KObject>>();
  readonly writes: {
    verb: string;
    kind: Kind | SubresourceTarget;
    namespace?: string;
    name: string;
    body?: unknown;
  }[] = [];
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  private readonly watchers = new Set<{ kind: Kind; namespace?: string; onChange: (c: WatchChange) => void }>();
  /** Answers of read subresources, by `target/namespace/name/verb`: a value, or an error to throw. */
  readonly subresourceReads = new Map<string, unknown>();
  /** Make the n-th write (1-based) of a kind fail, to test rollback. */
  failOn: { verb: string; kind: Kind; error: CorralError } | undefined;
  ready = true;
  /** What `serverVersion()` answers (serverTime: the apiserver's clock; default the local one). */
  version: Omit<ServerVersion, 'localTime'> = { gitVersion: 'v1.32.0', major: '1', minor: '32' };
  /** API groups served ('' is core). */
  groups = ['', 'kubevirt.io', 'cdi.kubevirt.io', 'snapshot.storage.k8s.io', 'metrics.k8s.io', 'k8s.cni.cncf.io'];
  /** Permissions refused to `canI`, as `verb resource[/subresource].group` (e.g. `delete virtualmachines.kubevirt.io`). */
  readonly denied = new Set<string>();

  readonly cache: ClusterCache = {
    get: (kind, ns, name) => this.table(kind).get(key(ns, name)),
    list: (kind, ns) => [...this.table(kind).values()].filter((o) => ns === undefined || o.metadata.namespace === ns),
    onNode: (kind, node) =>
      [...this.table(kind).values()].filter((o) => (o.status as { nodeName?: string } | undefined)?.nodeName === node),
    ofVm: (kind, ns, vm) =>
      [...this.table(kind).values()].filter(
        (o) => o.metadata.namespace === ns && o.metadata.labels?.['corral.dev/vm'] === vm,
      ),
    withLabel: (kind, k, v) =>
      [...this.table(kind).values()].filter(
        (o) => o.metadata.labels?.[k] !== undefined && (v === undefined || o.metadata.labels[k] === v),
      ),
  };

  put(kind: Kind, o: KObject): void {
    const existed = this.table(kind).has(key(o.metadata.namespace, o.metadata.name ?? ''));
    this.table(kind).set(key(o.metadata.namespace, o.metadata.name ?? ''), o);
    if (isCached(kind)) this.emit({ kind, type: existed ? 'MODIFIED' : 'ADDED', object: o });
    for (const w of this.watchers)
      if (w.kind === kind && (w.namespace === undefined || w.namespace === o.metadata.namespace))
        w.onChange({ type: existed ? 'MODIFIED' : 'ADDED', object: o });
  }

  isReady(): boolean {
    return this.ready;
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async create(kind: Kind, object: KObject): Promise<KObject> {
    this.maybeFail('create', kind);
    const name = object.metadata.name ?? '';
    if (this.table(kind).has(key(object.metadata.namespace, name)))
      throw new CorralError('CONFLICT', `${kind} ${name} already exists`);
    this.writes.push({ verb: 'create', kind, namespace: object.metadata.namespace, name, body: object });
    this.put(kind, structuredClone(object));
    return object;
  }

  async apply(kind: Kind, object: KObject): Promise<KObject> {
    this.maybeFail('apply', kind);
    const { namespace, name = '' } = object.metadata;
    this.writes.push({ verb: 'apply', kind, namespace, name, body: object });
    const current = this.table(kind).get(key(namespace, name));
    const next = (current ? mergePatchApply(current, object) : structuredClone(object)) as KObject;
    this.put(kind, next);
    return next;
  }

  async patch(kind: Kind, namespace: string | undefined, name: string, mergePatch: unknown): Promise<KObject> {
    this.maybeFail('patch', kind);
    const current = this.table(kind).get(key(namespace, name));
    if (!current) throw new CorralError('NOT_FOUND', `${kind} ${name} not found`);
    this.writes.push({ verb: 'patch', kind, namespace, name, body: mergePatch });
    const merged = mergePatchApply(current, mergePatch) as KObject;
    this.put(kind, merged);
    return merged;
  }

  async remove(kind: Kind, namespace: string | undefined, name: string): Promise<boolean> {
    this.maybeFail('remove', kind);
    const k = key(namespace, name);
    const o = this.table(kind).get(k);
    this.writes.push({ verb: 'remove', kind, namespace, name });
    if (!o) return false;
    this.table(kind).delete(k);
    if (isCached(kind)) this.emit({ kind, type: 'DELETED', object: o });
    return true;
  }

  async fetch(kind: Kind, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    return this.table(kind).get(key(namespace, name));
  }

  async fetchList(kind: Kind, options: { namespace?: string; labelSelector?: string } = {}): Promise<KObject[]> {
    const [lk, lv] = (options.labelSelector ?? '').split('=');
    return [...this.table(kind).values()].filter(
      (o) =>
        (options.namespace === undefined || o.metadata.namespace === options.namespace) &&
        (!lk || o.metadata.labels?.[lk] === lv),
    );
  }

  async subresource(
    target: SubresourceTarget,
    namespace: string,
    name: string,
    verb: string,
    body?: unknown,
  ): Promise<void> {
    this.writes.push({ verb, kind: target, namespace, name, body });
  }

  async listPage(kind: Kind, options: { namespace?: string; labelSelector?: string }): Promise<ListPage> {
    return { items: await this.fetchList(kind, options), resourceVersion: '1' };
  }

  /** Delivers every later `put` of the kind until the signal aborts. */
  async watch(
    kind: Kind,
    options: { namespace?: string },
    onChange: (change: WatchChange) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    const w = { kind, ...(options.namespace !== undefined ? { namespace: options.namespace } : {}), onChange };
    this.watchers.add(w);
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.watchers.delete(w);
    return 'closed';
  }

  async readSubresource(target: SubresourceTarget, namespace: string, name: string, verb: string): Promise<unknown> {
    const answer = this.subresourceReads.get(`${target}/${namespace}/${name}/${verb}`);
    if (answer instanceof Error) throw answer;
    if (answer === undefined) throw new CorralError('NOT_FOUND', `${target} ${namespace}/${name} ${verb} not found`);
    return answer;
  }

  async serverVersion(): Promise<ServerVersion> {
    const now = Date.now();
    return { serverTime: now, ...this.version, localTime: now };
  }

  async apiGroups(): Promise<string[]> {
    return [...this.groups];
  }

  async canI(q: AccessQuery): Promise<AccessAnswer> {
    const resource = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
    return { allowed: !this.denied.has(`${q.verb} ${resource}${q.group ? `.${q.group}` : ''}`) };
  }

  private maybeFail(verb: string, kind: Kind): void {
    if (this.failOn && this.failOn.verb === verb && this.failOn.kind === kind) throw this.failOn.error;
  }

  private table(kind: Kind): Map<string, KObject> {
    let t = this.objects.get(kind);
    if (!t) this.objects.set(kind, (t = new Map()));
    return t;
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }
}

function mergePatchApply(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatchApply(out[k], v);
  }
  return out;
}
