/**
 * What the Proxmox translator keeps beside Corral's services: the UPID registry over the task journal, which VMs have an operation in flight (PVE's `lock`), and the
 * VMs deleted through this API whose objects are still finalising (so `status/current` fails right away, as
 * Terraform's delete expects). The vmid index is the domain's (`services.fleet.vmids`), so `/api/vms` rows carry
 * the same ids.
 */
import { IoCounters } from '@/server/domain/io-counters';
import type { CorralServices } from '@/server/domain/services';
import type { Caller } from '@/server/domain/deps';
import type { Identity } from '@/server/domain/identity';
import type { VmRow } from '@/server/schemas/vms';
import type { Task } from '@/server/schemas/tasks';
import type { Principal } from './auth/authenticate';
import { hasPrivilege } from './auth/roles';
import { UpidRegistry, upidPid } from './tasks';
import { upidNode } from './translate/upid';
import type { VmidIndex, VmRef } from '@/server/domain/vmids';
import { findCt, type CtState } from '@/server/domain/ct-rows';
import { ctClaimSpec, LABEL_CT } from '@/server/domain/ct-spec';
import { ctNotFound, envelopeBuffer, vmNotFound, paramError } from './wire';

/** Journal actions that hold a PVE lock on their VM while they run. */
const LOCK_OF_ACTION: Record<string, string> = {
  create: 'create',
  migrate: 'migrate',
  snapshot: 'snapshot',
  'snapshot-delete': 'snapshot-delete',
  rollback: 'rollback',
  clone: 'clone',
  delete: 'destroyed',
  resize: 'disk',
  'disk-move': 'move',
  'ct-create': 'create',
  'ct-delete': 'destroyed',
};

/** Journal actions on containers (their targets are `namespace/name` too, so a CT's lock is kept apart from a VM's). */
export const isCtAction = (action: string): boolean => action.startsWith('ct-');
const lockKey = (target: string, ct: boolean): string => (ct ? `ct:${target}` : target);

export interface ResolvedVm {
  vmid: number;
  ref: VmRef;
  row: VmRow;
}

export interface ResolvedCt {
  vmid: number;
  ref: VmRef;
  ct: CtState;
}

export class ProxmoxState {
  /** UPIDs minted before a restart or by another replica resolve through the durable journal. */
  readonly upids = new UpidRegistry(
    2000,
    undefined,
    (pid, starttime) =>
      this.services.journal
        .list(Number.MAX_SAFE_INTEGER)
        .find((t) => upidPid(t.id) === pid && Math.floor(Date.parse(t.startedAt) / 1000) === starttime)?.id,
  );
  /** PVE's cumulative netin/netout/diskread/diskwrite: the metrics store's rates integrated per round. */
  readonly io: IoCounters;
  private readonly locks = new Map<string, Map<string, string>>();
  /**
   * VMs deleted through this API whose objects are still finalising, by `namespace/name` → the deleted VM's uid. The
   * uid matters: a new VM may take the name as soon as the old object is gone, and must never be hidden by it.
   */
  private readonly deleted = new Map<string, string>();
  /** CTs deleted through this API whose data PVC may still be in the cache: `namespace/name` → the PVC's uid. */
  private readonly deletedCts = new Map<string, string>();
  private readonly unsubscribers: (() => void)[] = [];
  /**
   * `/cluster/resources` qemu rows as JSON, split around `uptime` (the one field that changes by itself), so a
   * list of 10,000 VMs is a join of cached strings. An entry is dropped when its VM row changes (fleet delta:
   * VM, VMI, disks), when a task on it starts or ends (lock), when nodes change (the home node), and all at once
   * when the cluster layer takes a new metrics sample (cpu and mem are measured figures) or the metrics store
   * records a round (the I/O counters).
   */
  private readonly rowJson = new Map<string, { head: string; tail: string; since: number; running: boolean }>();
  /** Bumped on every invalidation; the joined list is reused while it and the wall-clock second are unchanged. */
  private version = 0;
  private listJson: { version: number; second: number; json: string; body?: Buffer } | undefined;
  /** The metrics sample the cached rows were built from. */
  private rowsSampledAt = 0;

  constructor(readonly services: CorralServices) {
    this.io = new IoCounters(services.deps, services.metricsStore);
    this.unsubscribers.push(
      services.fleet.subscribe((delta) => {
        this.version++;
        if (delta.type !== 'vm') {
          this.rowJson.clear();
          return;
        }
        this.rowJson.delete(
          delta.op === 'delete' ? `${delta.namespace}/${delta.name}` : `${delta.vm.namespace}/${delta.vm.name}`,
        );
        if (delta.op === 'delete') {
          this.deleted.delete(`${delta.namespace}/${delta.name}`);
        } else if (!this.isDeleted(delta.vm)) {
          this.deleted.delete(`${delta.vm.namespace}/${delta.vm.name}`); // a new VM under a deleted one's name
        }
      }),
    );
    this.unsubscribers.push(services.journal.subscribe((task) => this.trackLock(task)));
    // Filing a guest in a pool changes its row's `pool` field, not its objects: rebuild the cached rows.
    this.unsubscribers.push(
      services.pools.store.subscribe(() => {
        this.rowJson.clear();
        this.version++;
      }),
    );
    // A recorded round moves every running VM's I/O counters: cached rows are rebuilt from the new totals.
    this.unsubscribers.push(
      services.metricsStore.subscribe(() => {
        this.rowJson.clear();
        this.version++;
      }),
    );
  }

  close(): void {
    for (const u of this.unsubscribers) u();
    this.io.close();
  }

  /** The domain's vmid index, shared with `/api/vms`. */
  get vmids(): VmidIndex {
    return this.services.fleet.vmids;
  }

  private trackLock(task: Task): void {
    this.version++;
    this.rowJson.delete(task.target);
    const lock = LOCK_OF_ACTION[task.action];
    if (!lock) return;
    const key = lockKey(task.target, isCtAction(task.action));
    let byTask = this.locks.get(key);
    if (task.status === 'running') {
      if (!byTask) this.locks.set(key, (byTask = new Map()));
      byTask.set(task.id, lock);
    } else if (byTask) {
      byTask.delete(task.id);
      if (byTask.size === 0) this.locks.delete(key);
    }
  }

  /** PVE's `lock` value while an operation on the VM (or, with `ct`, the container) runs. */
  lockOf(namespace: string, name: string, ct = false): string | undefined {
    const byTask = this.locks.get(lockKey(`${namespace}/${name}`, ct));
    return byTask ? [...byTask.values()].pop() : undefined;
  }

  /** Drops every cached row once the metrics sample they measured is no longer the current one. */
  private dropRowsOfOldSample(): void {
    const sampledAt = this.services.metrics.sampledAt();
    if (sampledAt === this.rowsSampledAt) return;
    this.rowsSampledAt = sampledAt;
    this.rowJson.clear();
    this.version++;
  }

  /** A VM's cached resource row for `now`, built by `build` (with uptime 0) when missing. */
  cachedRowJson(key: string, now: number, build: () => { row: Record<string, unknown>; since: number }): string {
    this.dropRowsOfOldSample();
    let entry = this.rowJson.get(key);
    if (!entry) {
      const { row, since } = build();
      const running = row.status === 'running' && since > 0;
      const json = JSON.stringify({ ...row, uptime: -1 });
      const at = json.indexOf('"uptime":-1');
      entry = { head: json.slice(0, at + 9), tail: json.slice(at + 11), since, running };
      this.rowJson.set(key, entry);
    }
    const uptime = entry.running ? Math.max(0, Math.floor((now - entry.since) / 1000)) : 0;
    return entry.head + uptime + entry.tail;
  }

  /**
   * The JSON array of every qemu resource row at `now`. Uptimes are whole seconds, so a list built in this
   * second with no change since is exactly what a fresh build would give.
   */
  vmResourcesJson(
    now: number,
    build: (key: string, vmid: number, row: VmRow) => { row: Record<string, unknown>; since: number },
  ): string {
    const second = Math.floor(now / 1000);
    this.dropRowsOfOldSample();
    if (this.listJson && this.listJson.version === this.version && this.listJson.second === second)
      return this.listJson.json;
    const version = this.version;
    const parts: string[] = [];
    for (const { vmid, row } of this.vmRowsWithIds()) {
      const key = `${row.namespace}/${row.name}`;
      parts.push(this.cachedRowJson(key, now, () => build(key, vmid, row)));
    }
    const json = `[${parts.join(',')}]`;
    this.listJson = { version, second, json };
    return json;
  }

  /** The same list as a complete encoded `{"data": […]}` body, encoded once per list build. */
  vmResourcesBody(now: number, build: Parameters<ProxmoxState['vmResourcesJson']>[1]): Buffer {
    const json = this.vmResourcesJson(now, build);
    const cache = this.listJson;
    if (cache && cache.json === json) return (cache.body ??= envelopeBuffer(json));
    return envelopeBuffer(json);
  }

  /**
   * Forget a VM at once after a successful delete; its cache entry may linger while finalisers run. When the cache
   * has already dropped it (or a new VM holds the name), there is nothing left to hide.
   */
  markDeleted(ref: VmRef, uid: string): void {
    this.version++;
    if (this.services.fleet.vmRow(ref.namespace, ref.name)?.uid !== uid) return;
    this.deleted.set(`${ref.namespace}/${ref.name}`, uid);
    this.services.fleet.retireVmid(ref, uid);
  }

  private isDeleted(row: Pick<VmRow, 'namespace' | 'name' | 'uid'>): boolean {
    return this.deleted.get(`${row.namespace}/${row.name}`) === row.uid;
  }

  parseVmid(text: string): number {
    if (!/^\d+$/.test(text)) throw paramError({ vmid: `type check ('integer') failed - got '${text}'` });
    const vmid = Number(text);
    if (vmid < 100 || vmid > 999_999_999) throw paramError({ vmid: 'value must be between 100 and 999999999' });
    return vmid;
  }

  resolveVm(node: string, vmidText: string): ResolvedVm {
    const vmid = this.parseVmid(vmidText);
    const ref = this.vmids.refOf(vmid);
    // A container's vmid has no qemu config, as in PVE (qemu-server/<vmid>.conf does not exist).
    const row = ref && ref.kind !== 'ct' ? this.services.fleet.vmRow(ref.namespace, ref.name) : undefined;
    if (!ref || !row || this.isDeleted(row)) throw vmNotFound(node, vmid);
    return { vmid, ref, row };
  }

  /** The container a vmid names; a VM's vmid, an unknown one or a CT deleted through this API is PVE's lxc 404. */
  resolveCt(node: string, vmidText: string): ResolvedCt {
    const vmid = this.parseVmid(vmidText);
    const ref = this.vmids.refOf(vmid);
    const ct = ref?.kind === 'ct' ? findCt(this.services.deps, ref.namespace, ref.name) : undefined;
    if (!ref || !ct || this.isCtDeleted(ct)) throw ctNotFound(node, vmid);
    return { vmid, ref, ct };
  }

  /** Every live CT with its vmid, in namespace/name order. */
  ctsWithIds(): ResolvedCt[] {
    const out: ResolvedCt[] = [];
    const deps = this.services.deps;
    for (const pvc of deps.cluster.cache.withLabel('PersistentVolumeClaim', LABEL_CT, 'true')) {
      const spec = ctClaimSpec(pvc);
      if (!spec) continue;
      const ref = { namespace: spec.namespace, name: spec.name };
      const vmid = this.services.fleet.ctVmid(ref.namespace, ref.name);
      const ct = vmid === undefined ? undefined : findCt(deps, ref.namespace, ref.name);
      if (vmid === undefined || !ct || this.isCtDeleted(ct)) continue;
      out.push({ vmid, ref: { ...ref, kind: 'ct' }, ct });
    }
    return out.sort((a, b) => a.ref.namespace.localeCompare(b.ref.namespace) || a.ref.name.localeCompare(b.ref.name));
  }

  /** Forget a CT at once after a successful delete (its PVC may finalise for a while): 404 and a free vmid. */
  markCtDeleted(ref: VmRef, pvcUid: string): void {
    // Entries whose PVC has left the cache have nothing left to hide: dropped here, so the map stays small.
    for (const [key, uid] of this.deletedCts) {
      const [namespace = '', name = ''] = key.split('/');
      if (findCt(this.services.deps, namespace, name)?.pvc.metadata.uid !== uid) this.deletedCts.delete(key);
    }
    this.deletedCts.set(`${ref.namespace}/${ref.name}`, pvcUid);
    this.services.fleet.retireCtVmid(ref.namespace, ref.name, pvcUid);
  }

  private isCtDeleted(ct: CtState): boolean {
    if (ct.pvc.metadata.deletionTimestamp) return true;
    const key = `${ct.spec.namespace}/${ct.spec.name}`;
    const uid = this.deletedCts.get(key);
    if (uid === undefined) return false;
    if (uid === ct.pvc.metadata.uid) return true;
    this.deletedCts.delete(key); // a new CT under the deleted one's name
    return false;
  }

  /** The node a CT is shown on: where its pod runs, else the home node. */
  ctNode(ct: CtState): string {
    const node = ct.pod && !ct.pod.metadata.deletionTimestamp ? ct.pod.spec?.nodeName : undefined;
    return typeof node === 'string' && node ? upidNode(node) : this.homeNode();
  }

  /** Every VM row with its vmid (the row's own: the fleet view builds rows from the vmid index). */
  vmRowsWithIds(): { vmid: number; row: VmRow }[] {
    const out: { vmid: number; row: VmRow }[] = [];
    for (const row of this.services.fleet.vmRows()) {
      if (this.isDeleted(row)) continue;
      out.push({ vmid: row.vmid, row });
    }
    return out;
  }

  /** Node names (PVE-safe), sorted; the first is where unplaced VMs are listed. */
  nodeNames(): string[] {
    return this.services.nodes.list().map((n) => n.name);
  }

  homeNode(): string {
    return upidNode(this.nodeNames()[0] ?? 'corral');
  }

  /** The node a VM is shown on: where it runs, else the home node. */
  vmNode(row: Pick<VmRow, 'node'>): string {
    return row.node ? upidNode(row.node) : this.homeNode();
  }

  /** The Corral caller a Proxmox principal acts as (recorded on tasks). */
  caller(principal: Principal): Caller {
    const login = principal.tokenId ?? principal.userid;
    const identity: Identity = {
      login,
      name: login,
      admin: hasPrivilege(principal.role, 'VM.PowerMgmt'),
      enforced: false,
    };
    return { identity };
  }

  upidOfTask(taskId: string, meta: { node: string; vmid?: number; user: string }): string {
    const task = this.services.journal.get(taskId);
    if (!task) throw new Error(`internal: task ${taskId} is not in the journal`);
    return this.upids.upidFor(task, meta);
  }

  /** A UPID for any journal task (tasks not started here get one on first sight). */
  upidOfJournalTask(task: Task): string {
    const [namespace = '', name = ''] = task.target.split('/');
    if (isCtAction(task.action)) {
      const vmid = this.services.fleet.ctVmid(namespace, name);
      const ct = findCt(this.services.deps, namespace, name);
      return this.upids.upidFor(task, {
        node: ct ? this.ctNode(ct) : this.homeNode(),
        ...(vmid !== undefined ? { vmid } : {}),
        user: pveUser(task.caller),
      });
    }
    const vmid = this.vmids.vmidOf({ namespace, name });
    const row = this.services.fleet.vmRow(namespace, name);
    return this.upids.upidFor(task, {
      node: row ? this.vmNode(row) : this.homeNode(),
      ...(vmid !== undefined ? { vmid } : {}),
      user: pveUser(task.caller),
    });
  }
}

/** A Corral login as a PVE user id (`alice@github` stays; `system` becomes `system@corral`). */
export function pveUser(login: string): string {
  return login.includes('@') ? login : `${login || 'corral'}@corral`;
}
