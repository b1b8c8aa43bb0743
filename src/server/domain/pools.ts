/**
 * Pools (ADR-0008): user-defined folders of VMs and CTs. This file holds what a pool means — the tree with its
 * members resolved against the live fleet, and the writes (create, delete, move, add and remove a member) as
 * changes of the stored document (pools-store.ts); the rules of paths and refs are in pools-path.ts and the
 * fan-out of power actions in pools-actions.ts.
 *
 * A member is a ref `kubevirt/<context>/<namespace>/<name>`. A ref that names nothing (the VM was deleted, or
 * it belongs to a context this Corral does not serve) is kept and shown as missing: pools outlive their members.
 * A VM and a CT of the same namespace and name share one ref; it resolves to the VM.
 */
import type { FolderListing, FolderMember, FolderUsage } from '../schemas/pools';
import { CorralError } from '../errors';
import { depsFor, type Caller, type DomainDeps } from './deps';
import { ctRow, findCt, listCts, podPhase } from './ct-rows';
import {
  ancestorsAndSelf,
  checkPath,
  comparePaths,
  depthOf,
  formatRef,
  isWithin,
  KUBEVIRT_BACKEND,
  leafOf,
  MAX_DEPTH,
  parentOf,
  parseRef,
  readRef,
  type MemberRef,
} from './pools-path';
import type { FolderDoc, FolderStore } from './pools-store';
import { quantityToNumber } from './quantity';
import { runAsTask } from './tasks';
import { vmUsage } from './usage';

/** The ref this Corral gives one of its own instances. */
export const refOf = (deps: DomainDeps, namespace: string, name: string): string =>
  formatRef({ backend: KUBEVIRT_BACKEND, context: deps.cluster.info.context, namespace, name });

const bytes = (q: string): number => {
  try {
    return q ? quantityToNumber(q) : 0;
  } catch {
    return 0;
  }
};

function missing(ref: string, reason: string, parts = readRef(ref)): FolderMember {
  return {
    ref,
    backend: parts?.backend ?? '',
    context: parts?.context ?? '',
    namespace: parts?.namespace ?? '',
    name: parts?.name ?? '',
    type: '',
    missing: true,
    reason,
    status: 'missing',
    running: false,
    cpu: 0,
    mem: '',
    node: '',
    vmid: null,
    usage: null,
  };
}

/** A ref against the live fleet: the VM or CT it names now, or why it names nothing. */
export function resolveMember(deps: DomainDeps, ref: string): FolderMember {
  const parts = readRef(ref);
  if (!parts) return missing(ref, 'not a ref this Corral can read (backend/context/namespace/name)', undefined);
  const at = depsFor(deps, parts.context);
  if (!at)
    return missing(ref, `context '${parts.context}' is not served by this Corral (it serves ${served(deps)})`, parts);
  return resolveIn(at, ref, parts);
}

/** The contexts this Corral serves, quoted, for messages. */
function served(deps: DomainDeps): string {
  const all = deps.peers?.all() ?? [deps];
  return all.map((d) => `'${d.cluster.info.context}'`).join(', ');
}

function resolveIn(deps: DomainDeps, ref: string, parts: MemberRef): FolderMember {
  const own = deps.cluster.info.context;
  const base = { ref, ...parts, missing: false, reason: '' };
  const vm = deps.fleet.vmRow(parts.namespace, parts.name);
  if (vm) {
    const u = vm.running ? vmUsage(deps, vm.namespace, vm.name) : undefined;
    return {
      ...base,
      type: 'vm',
      status: vm.status,
      running: vm.running,
      cpu: vm.cpu,
      mem: vm.mem,
      node: vm.node,
      vmid: vm.vmid,
      usage: u ? { cpuCores: u.cpuCores, memoryBytes: u.memoryBytes } : null,
    };
  }
  const ct = findCt(deps, parts.namespace, parts.name);
  if (ct) {
    const row = ctRow(ct.spec, ct.pvc, ct.pod, undefined, deps.cluster.info.context);
    const live = ct.pod !== undefined && !ct.pod.metadata.deletionTimestamp;
    const u = live ? deps.cluster.metrics?.pod(parts.namespace, parts.name) : undefined;
    return {
      ...base,
      type: 'ct',
      status: podPhase(ct.pod),
      running: live,
      cpu: row.cpu,
      mem: row.mem,
      node: row.node,
      vmid: deps.fleet.ctVmid(parts.namespace, parts.name) ?? null,
      usage: u ? { cpuCores: u.cpuCores, memoryBytes: u.memoryBytes } : null,
    };
  }
  return missing(ref, `no VM or CT ${parts.namespace}/${parts.name} in context '${own}'`, parts);
}

export function usageOf(members: readonly FolderMember[]): FolderUsage {
  const u: FolderUsage = {
    instances: 0,
    running: 0,
    missing: 0,
    cpus: 0,
    memoryBytes: 0,
    cpuUsedCores: 0,
    memoryUsedBytes: 0,
  };
  for (const m of members) {
    if (m.missing) {
      u.missing++;
      continue;
    }
    u.instances++;
    if (m.running) u.running++;
    u.cpus += m.cpu;
    u.memoryBytes += bytes(m.mem);
    u.cpuUsedCores += m.usage?.cpuCores ?? 0;
    u.memoryUsedBytes += m.usage?.memoryBytes ?? 0;
  }
  u.cpuUsedCores = Math.round(u.cpuUsedCores * 1000) / 1000;
  return u;
}

/** `GET /api/folders`: every pool in depth-first order with its members resolved, then everything unfoldered. */
export function listFolders(deps: DomainDeps, doc: Readonly<FolderDoc>): FolderListing {
  const inPool = new Set<string>();
  const folders = Object.keys(doc)
    .sort(comparePaths)
    .map((path) => {
      const folder = doc[path]!;
      for (const r of folder.members) inPool.add(r);
      const members = folder.members.map((r) => resolveMember(deps, r));
      return {
        path,
        name: leafOf(path),
        parent: parentOf(path),
        depth: depthOf(path),
        comment: folder.comment ?? '',
        members,
        usage: usageOf(members),
      };
    });
  const unfoldered: FolderMember[] = [];
  // Every served cluster's instances: a pool spans clusters, and so does the list of those in none.
  for (const at of deps.peers?.all() ?? [deps]) {
    for (const vm of at.fleet.vmRows()) {
      const ref = refOf(at, vm.namespace, vm.name);
      if (!inPool.has(ref)) unfoldered.push(resolveMember(at, ref));
    }
    for (const ct of listCts(at)) {
      const ref = refOf(at, ct.namespace, ct.name);
      // A CT that shares its name with a VM shares its ref too (listed once, as the VM).
      if (!inPool.has(ref) && !at.fleet.vmRow(ct.namespace, ct.name)) unfoldered.push(resolveMember(at, ref));
    }
  }
  return { context: deps.cluster.info.context, backend: KUBEVIRT_BACKEND, folders, unfoldered };
}

const notFound = (path: string) => new CorralError('NOT_FOUND', `pool '${path}' does not exist`);

/*
 * Refusals are checked twice: against the current document before a task is started (so a refused request records
 * no task and changes no cluster object), and again inside the update, where a concurrent writer may have changed it.
 */
function mustExist(doc: Readonly<FolderDoc>, path: string): void {
  if (!doc[path]) throw notFound(path);
}

function mustNotExist(doc: Readonly<FolderDoc>, path: string): void {
  if (doc[path]) throw new CorralError('CONFLICT', `pool '${path}' already exists`);
}

function checkMove(doc: Readonly<FolderDoc>, from: string, to: string): void {
  mustExist(doc, from);
  if (isWithin(to, from))
    throw new CorralError('CONFLICT', `cannot move pool '${from}' into itself or one of its sub-pools ('${to}')`);
  mustNotExist(doc, to);
}

function checkAdd(doc: Readonly<FolderDoc>, path: string, ref: string, name: string): void {
  mustExist(doc, path);
  const current = poolOfRef(doc as FolderDoc, ref);
  if (current && current !== path)
    throw new CorralError(
      'CONFLICT',
      `${name} is already in pool '${current}' (an instance is in one pool at most); remove it there first`,
    );
}

/** Where a ref is filed, '' when nowhere. */
function poolOfRef(doc: FolderDoc, ref: string): string {
  for (const [path, f] of Object.entries(doc)) if (f.members.includes(ref)) return path;
  return '';
}

/** Creates the missing ancestors of `path` (and `path` itself when `self`); returns what it created. */
function ensure(doc: FolderDoc, path: string, self: boolean): string[] {
  const created: string[] = [];
  for (const p of ancestorsAndSelf(path)) {
    if (p === path && !self) break;
    if (!doc[p]) {
      doc[p] = { members: [] };
      created.push(p);
    }
  }
  return created;
}

export class FolderService {
  constructor(
    private readonly deps: DomainDeps,
    private readonly store: FolderStore,
  ) {}

  async list(): Promise<FolderListing> {
    await this.store.start();
    return listFolders(this.deps, this.store.current());
  }

  /** The pool a VM or CT of this cluster is in ('' when none), from memory. */
  /** The pool of an instance of `context` (default: this cluster); pools span every served cluster. */
  poolOf(namespace: string, name: string, context = this.deps.cluster.info.context): string {
    return this.store.poolOf(formatRef({ backend: KUBEVIRT_BACKEND, context, namespace, name }));
  }

  /** Throws the refusal `check` finds in the current document, read again from the cluster before refusing. */
  private async refuseEarly(check: (doc: Readonly<FolderDoc>) => void): Promise<void> {
    try {
      check(this.store.current());
    } catch {
      check(await this.store.refresh());
    }
  }

  private task<T>(caller: Caller, action: string, target: string, body: () => Promise<[T, string]>): Promise<T> {
    return runAsTask(this.deps.journal, action, `pool/${target}`, caller.identity.login, async (task) => {
      const [result, line] = await body();
      task.done(line);
      return result;
    });
  }

  /** `POST /api/folders`: the pool and any missing parents; an existing pool is a 409. */
  async create(caller: Caller, path: string, comment?: string): Promise<{ path: string; created: string[] }> {
    checkPath(path);
    await this.refuseEarly((doc) => mustNotExist(doc, path));
    return this.task(caller, 'pool-create', path, async () => {
      const created = await this.store.update((doc) => {
        mustNotExist(doc, path);
        const made = ensure(doc, path, true);
        if (comment) doc[path]!.comment = comment;
        return made;
      });
      return [{ path, created }, `created ${created.map((p) => `'${p}'`).join(', ')}`];
    });
  }

  /** Sets (or with '' clears) a pool's comment. */
  async setComment(caller: Caller, path: string, comment: string): Promise<void> {
    checkPath(path);
    await this.refuseEarly((doc) => mustExist(doc, path));
    return this.task(caller, 'pool-update', path, async () => {
      await this.store.update((doc) => {
        mustExist(doc, path);
        const f = doc[path]!;
        if (comment) f.comment = comment;
        else delete f.comment;
      });
      return [undefined, `comment of '${path}' ${comment ? 'set' : 'cleared'}`];
    });
  }

  /** `DELETE /api/folders`: the pool and its descendants; their members are unfoldered, never deleted. */
  async remove(
    caller: Caller,
    path: string,
    options: { onlyEmpty?: boolean } = {},
  ): Promise<{ removed: string[]; unfoldered: string[] }> {
    checkPath(path);
    await this.refuseEarly((doc) => mustExist(doc, path));
    return this.task(caller, 'pool-delete', path, async () => {
      const out = await this.store.update((doc) => {
        mustExist(doc, path);
        const removed = Object.keys(doc)
          .filter((p) => isWithin(p, path))
          .sort(comparePaths);
        const unfoldered = removed.flatMap((p) => doc[p]!.members);
        if (options.onlyEmpty && (removed.length > 1 || unfoldered.length > 0))
          throw new CorralError(
            'CONFLICT',
            `pool '${path}' is not empty (${unfoldered.length} member(s), ${removed.length - 1} sub-pool(s))`,
          );
        for (const p of removed) delete doc[p];
        return { removed, unfoldered };
      });
      return [out, `removed ${out.removed.length} pool(s), unfoldered ${out.unfoldered.length} member(s)`];
    });
  }

  /** `POST /api/folders/move`: renames the prefix `from` to `to` for the pool and all its descendants. */
  async move(caller: Caller, from: string, to: string): Promise<{ from: string; to: string; moved: string[] }> {
    checkPath(from, 'from');
    checkPath(to, 'to');
    await this.refuseEarly((doc) => checkMove(doc, from, to));
    return this.task(caller, 'pool-move', from, async () => {
      const moved = await this.store.update((doc) => {
        checkMove(doc, from, to);
        const subtree = Object.keys(doc)
          .filter((p) => isWithin(p, from))
          .sort(comparePaths);
        const deepest = Math.max(...subtree.map(depthOf)) - depthOf(from) + depthOf(to);
        if (deepest > MAX_DEPTH)
          throw new CorralError(
            'CONFLICT',
            `moving '${from}' to '${to}' would nest pools ${deepest} levels deep (at most ${MAX_DEPTH})`,
          );
        ensure(doc, to, false);
        for (const p of subtree) {
          doc[to + p.slice(from.length)] = doc[p]!;
          delete doc[p];
        }
        return subtree;
      });
      return [{ from, to, moved }, `moved '${from}' to '${to}' (${moved.length} pool(s))`];
    });
  }

  /** `POST /api/folders/members`: files an instance of this cluster in a pool; one in another pool is a 409. */
  async addMember(caller: Caller, path: string, ref: string): Promise<{ path: string; ref: string; changed: boolean }> {
    checkPath(path);
    const parts = parseRef(ref);
    const at = depsFor(this.deps, parts.context);
    if (!at)
      throw new CorralError(
        'NOT_FOUND',
        `ref: context '${parts.context}' is not served by this Corral (it serves ${served(this.deps)})`,
      );
    const canonical = formatRef(parts);
    if (!at.fleet.vmRow(parts.namespace, parts.name) && !findCt(at, parts.namespace, parts.name))
      throw new CorralError('NOT_FOUND', `ref: no VM or CT ${parts.namespace}/${parts.name}`);
    const name = `${parts.namespace}/${parts.name}`;
    await this.refuseEarly((doc) => checkAdd(doc, path, canonical, name));
    return this.task(caller, 'pool-add', path, async () => {
      const changed = await this.store.update((doc) => {
        checkAdd(doc, path, canonical, name);
        if (poolOfRef(doc, canonical) === path) return false;
        doc[path]!.members.push(canonical);
        return true;
      });
      return [
        { path, ref: canonical, changed },
        changed ? `added ${canonical} to '${path}'` : `${canonical} was already in '${path}'`,
      ];
    });
  }

  /** `DELETE /api/folders/members`: unfolders a ref (kept or missing alike). */
  async removeMember(caller: Caller, ref: string): Promise<{ path: string; ref: string }> {
    if (ref === '' || ref.length > 600) throw new CorralError('BAD_REQUEST', 'ref: must be 1 to 600 characters');
    // A malformed ref that is not stored is the caller's mistake; a stored one (hand-edited) may always be removed.
    if (!poolOfRef(this.store.current() as FolderDoc, ref)) parseRef(ref);
    const poolOf = (doc: Readonly<FolderDoc>): string => {
      const p = poolOfRef(doc as FolderDoc, ref);
      if (!p) throw new CorralError('NOT_FOUND', `ref: ${ref} is in no pool`);
      return p;
    };
    await this.refuseEarly(poolOf);
    return this.task(caller, 'pool-remove', poolOf(this.store.current()), async () => {
      const path = await this.store.update((doc) => {
        const p = poolOf(doc);
        doc[p]!.members = doc[p]!.members.filter((r) => r !== ref);
        return p;
      });
      return [{ path, ref }, `removed ${ref} from '${path}'`];
    });
  }
}
