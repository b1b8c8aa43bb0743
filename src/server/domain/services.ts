/**
 * The domain's public face: `createCorralServices(cluster)` wires the fleet view, the task journal and the live feed
 * around one cluster and exposes each operation as a method. Routers, the Proxmox translator and tests call these;
 * new concerns (snapshots, scale, clone, metrics, ...) live in their own domain files and take `services.deps`.
 */
import type { FleetEvent } from '../schemas/live';
import type { DataVolumeCreateInput, SourceInput } from '../schemas/images';
import type { VmCreateInput, VmAction } from '../schemas/vms';
import type { FolderAction } from '../schemas/pools';
import { CorralError } from '../errors';
import { CURATED_NAMES, listCatalog } from './catalog';
import { CtFleet } from './ct-fleet';
import { labelCtVmid } from './ct-ops';
import { deleteDataVolume, importDataVolume, listDataVolumes } from './datavolumes';
import { removeSource, saveSource } from './sources';
import { bootcBlockers } from './bootc-capability';
import { capabilityFacts, instanceTypes, invalidateCapabilityFacts } from './cluster-facts';
import { Doctor } from './doctor';
import { Extensions } from './extensions';
import { Schedules, type ScheduleUpdate } from './schedules';
import { DEFAULT_RUNNER_IMAGE, type ScheduleInput } from './schedules-spec';
import type { ClusterPort, KObject } from './cluster-port';
import type { Caller, CorralConfig, DomainDeps } from './deps';
import { LiveFeed } from './live-feed';
import { FolderService } from './pools';
import { runFolderAction } from './pools-actions';
import { FolderStore } from './pools-store';
import { MetricsStore } from './metrics-store';
import { ProxmoxGapRegistry } from './proxmox-gaps';
import { Replicas, idTagOf, replicaConfigFromEnv, type ReplicaConfig } from './replicas';
import { TaskJournal } from './tasks';
import { nodeUsage, vmUsage } from './usage';
import { migrateVm, requireVm, vmAction } from './vm-actions';
import { createVm } from './vm-create';
import { deleteVm, deletionPlan } from './vm-delete';
import { LABEL_VMID } from './labels';
import { patchVmMetadata } from './vm-hw-cpu';
import { FleetView } from './vm-rows';
import { setTag } from './vm-tags';

export type { Caller, CorralConfig, DomainDeps } from './deps';

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): CorralConfig {
  return {
    defaultNamespace: env.CORRAL_NAMESPACE?.trim() || 'tailvm',
    pollMs: 1000,
    waitTimeoutMs: 30 * 60_000,
  };
}

export function createCorralServices(
  cluster: ClusterPort,
  config: Partial<CorralConfig> = {},
  replicaConfig: Partial<ReplicaConfig> = {},
) {
  const replica = { ...replicaConfigFromEnv(), ...replicaConfig };
  const journal = new TaskJournal({ capacity: replica.retainCount, idTag: idTagOf(replica.identity) });
  const fleet = new FleetView(cluster);
  const live = new LiveFeed(fleet, journal, () => cluster.isReady());
  const deps: DomainDeps = { cluster, journal, fleet, config: { ...configFromEnv(), ...config } };
  // The durable journal, heartbeat and leader election; started by the composition root (start.ts), not here, so
  // services built over a fake cluster in unit tests stay in memory.
  const replicas = new Replicas(cluster, journal, replica, deps.config.defaultNamespace);
  const metricsStore = new MetricsStore(deps);
  // Pools: the ConfigMap followed by a watch from the start, so /metrics and the Proxmox rows read them from memory.
  const folderStore = new FolderStore(deps);
  void folderStore.start();
  const folders = new FolderService(deps, folderStore);
  const doctor = new Doctor(deps);
  // Installing or removing an extension changes what the doctor and /api/capabilities report.
  const extensions = new Extensions(deps, undefined, () => {
    doctor.invalidate();
    invalidateCapabilityFacts();
  });
  // Snapshot and power schedules: CronJobs whose Jobs run Corral's image (schedules.ts).
  const schedules = new Schedules(deps, {
    image: process.env.CORRAL_IMAGE?.trim() || DEFAULT_RUNNER_IMAGE,
    isInstalled: (name) => extensions.isInstalled(name),
  });
  live.addSource((push) => metricsStore.subscribe(push));
  // CT rows (pod + data volume), pushed like VM rows (ct-fleet.ts).
  const cts = new CtFleet(deps);
  live.addSource((push) => cts.subscribe(push));
  // A collision's newcomer keeps the id the vmid index chose across restarts: it becomes the VM's label (a CT's: its
  // data PVC's).
  fleet.persistVmid = (ref, vmid) => {
    (ref.kind === 'ct'
      ? labelCtVmid(deps, ref.namespace, ref.name, vmid)
      : patchVmMetadata(deps, ref.namespace, ref.name, { [LABEL_VMID]: String(vmid) })
    ).then(
      () => console.log(`[corral] labelled ${ref.namespace}/${ref.name} with vmid ${vmid} (its fallback id was taken)`),
      (err: unknown) =>
        console.log(`[corral] could not label ${ref.namespace}/${ref.name} with vmid ${vmid}: ${String(err)}`),
    );
  };

  return {
    deps,
    cluster,
    journal,
    replicas,
    fleet,
    /** CT rows as the live feed pushes them. */
    cts,
    live,
    /** Pools (folders, ADR-0008): pools.ts, pools-store.ts, pools-actions.ts. */
    pools: {
      store: folderStore,
      list: () => folders.list(),
      poolOf: (namespace: string, name: string, context?: string) => folders.poolOf(namespace, name, context),
      create: (caller: Caller, path: string, comment?: string) => folders.create(caller, path, comment),
      setComment: (caller: Caller, path: string, comment: string) => folders.setComment(caller, path, comment),
      remove: (caller: Caller, path: string, options?: { onlyEmpty?: boolean }) =>
        folders.remove(caller, path, options),
      move: (caller: Caller, from: string, to: string) => folders.move(caller, from, to),
      addMember: (caller: Caller, path: string, ref: string) => folders.addMember(caller, path, ref),
      removeMember: (caller: Caller, ref: string) => folders.removeMember(caller, ref),
      action: (caller: Caller, path: string, action: FolderAction) =>
        runFolderAction(deps, folderStore, caller, path, action),
    },
    /** Retained VM/node/fleet metrics histories, recorded after every sampling round (metrics-store.ts). */
    metricsStore,
    /** PVE endpoints Proxmox clients asked for that Corral does not serve (the gap log; proxmox-gaps.ts). */
    proxmoxGaps: new ProxmoxGapRegistry(),
    vms: {
      list: (filter?: { namespace?: string; tag?: string; node?: string }) => {
        const rows = fleet.vmRows();
        if (!filter || (!filter.namespace && !filter.tag && !filter.node)) return rows;
        return rows.filter(
          (r) =>
            (!filter.namespace || r.namespace === filter.namespace) &&
            (!filter.tag || r.tags.includes(filter.tag)) &&
            (!filter.node || r.node === filter.node),
        );
      },
      listJson: () => fleet.vmRowsJson(),
      /** The first `limit` rows in name order with the list's counts, cached per fleet version (vm-first-page.ts). */
      firstPage: (limit: number) => fleet.vmFirstPage(limit),
      row: (namespace: string, name: string) => {
        const row = fleet.vmRow(namespace, name);
        if (!row) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
        return row;
      },
      /** The VM as the watch cache holds it (its projection, see cluster/projection.ts): for frequent reads. */
      cached: (namespace: string, name: string): KObject => requireVm(deps, namespace, name),
      /** The VM exactly as the apiserver stores it (the YAML view): read from the apiserver, not the cache. */
      manifest: async (namespace: string, name: string): Promise<KObject> => {
        const vm = await deps.cluster.fetch('VirtualMachine', namespace, name);
        if (!vm) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
        return vm;
      },
      create: (caller: Caller, input: VmCreateInput) => createVm(deps, caller, input),
      action: (caller: Caller, namespace: string, name: string, action: VmAction) =>
        vmAction(deps, caller, namespace, name, action),
      migrate: (caller: Caller, namespace: string, name: string, targetNode?: string) =>
        migrateVm(deps, caller, namespace, name, targetNode),
      setTag: (caller: Caller, namespace: string, name: string, tag: string, on: boolean) =>
        setTag(deps, caller, namespace, name, tag, on),
      deletionPlan: async (namespace: string, name: string) => {
        const { items: _items, ...plan } = await deletionPlan(deps, namespace, name);
        return plan;
      },
      delete: (caller: Caller, namespace: string, name: string) => deleteVm(deps, caller, namespace, name),
    },
    nodes: {
      list: () => fleet.nodeRows(),
      get: (name: string) => {
        const node = fleet.nodeRow(name);
        if (!node) throw new CorralError('NOT_FOUND', `node ${name} not found`);
        return { ...node, vmRows: fleet.vmRows().filter((r) => r.node === name) };
      },
    },
    /** Usage from the cluster's metrics sample (memory only, never a cluster call); null when not measured. */
    metrics: {
      vm: (namespace: string, name: string) => vmUsage(deps, namespace, name) ?? null,
      node: (name: string) => nodeUsage(deps, name) ?? null,
      /** Epoch ms of the last sample; 0 when metrics.k8s.io is not served. */
      sampledAt: () => cluster.metrics?.sampledAt() ?? 0,
    },
    images: { list: () => listCatalog(cluster, deps.config.defaultNamespace) },
    /** Custom image sources (ConfigMap corral-sources); the catalog above reads the same list. */
    sources: {
      list: async () => (await listCatalog(cluster, deps.config.defaultNamespace)).filter((i) => i.custom),
      save: (caller: Caller, input: SourceInput) =>
        saveSource(deps, caller, input, CURATED_NAMES).finally(() => doctor.invalidate()),
      remove: (caller: Caller, name: string) => removeSource(deps, caller, name).finally(() => doctor.invalidate()),
    },
    /** Imported images: DataVolumes that belong to no VM. */
    dataVolumes: {
      list: () => listDataVolumes(deps),
      create: (caller: Caller, input: DataVolumeCreateInput) => importDataVolume(deps, caller, input),
      delete: (caller: Caller, namespace: string, name: string) => deleteDataVolume(deps, caller, namespace, name),
    },
    tasks: {
      list: (limit?: number) => journal.list(limit),
      get: (id: string) => {
        const task = journal.get(id);
        if (!task)
          throw new CorralError(
            'NOT_FOUND',
            `task ${id} not found (the journal keeps the newest ${replica.retainCount} tasks for ${replica.retainDays} days)`,
          );
        return task;
      },
    },
    /** The extension catalog merged with installed state; install and uninstall (extensions.ts). */
    extensions: {
      list: () => extensions.list(),
      install: (caller: Caller, name: string) => extensions.install(caller, name),
      uninstall: (caller: Caller, name: string) => extensions.uninstall(caller, name),
    },
    /** Snapshot and power schedules (schedules.ts): CRUD, run now, run history. */
    schedules: {
      list: () => schedules.list(),
      forVm: (namespace: string, name: string) => schedules.forVm(namespace, name),
      get: (name: string) => schedules.get(name),
      create: (caller: Caller, input: ScheduleInput) => schedules.create(caller, input),
      update: (caller: Caller, name: string, change: ScheduleUpdate) => schedules.update(caller, name, change),
      remove: (caller: Caller, name: string) => schedules.remove(caller, name),
      runNow: (caller: Caller, name: string) => schedules.runNow(caller, name),
      runs: (name: string) => schedules.runs(name),
    },
    /** Cluster health checks and their fixes (doctor.ts). */
    doctor: {
      report: (options: { refresh?: boolean } = {}) => doctor.report(options),
      fix: (caller: Caller, name?: string) => doctor.fix(caller, name),
    },
    capabilities: async () => {
      const [facts, bootcWhyNot, blocked] = await Promise.all([
        capabilityFacts(deps),
        bootcBlockers(deps),
        doctor.blockers(),
      ]);
      return {
        ...facts,
        canSnapshot: facts.canSnapshot && !blocked.some((b) => b.feature === 'snapshots'),
        blocked,
        bootc: bootcWhyNot.length === 0,
        bootcWhyNot,
        demo: cluster.info.demo,
        cluster: cluster.info.name,
        context: cluster.info.context,
        contexts: cluster.info.contexts,
        defaultNamespace: deps.config.defaultNamespace,
      };
    },
    instancetypes: () => instanceTypes(deps),
    snapshot: (): FleetEvent => ({
      type: 'snapshot',
      vms: fleet.vmRows(),
      cts: cts.list(),
      nodes: fleet.nodeRows(),
      tasks: journal.list(100),
      demo: cluster.info.demo,
      cluster: cluster.info.name,
      // A browser that connects while the cluster is already unreachable must show the banner at once.
      ready: cluster.isReady(),
    }),
    close: () => {
      schedules.close();
      folderStore.close();
      doctor.close();
      metricsStore.close();
      live.close();
      cts.close();
      fleet.close();
    },
  };
}

export type CorralServices = ReturnType<typeof createCorralServices>;
