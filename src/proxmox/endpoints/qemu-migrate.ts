/**
 * `GET|POST /nodes/{node}/qemu/{vmid}/migrate`: PVE's migration preconditions and `qm migrate`, served by the domain:
 * a running VM live-migrates (`migrateVm`, a VirtualMachineInstanceMigration followed as a task) and disks that are
 * not shared (ReadWriteMany) block that as PVE's local disks do; a stopped VM migrates offline — the domain pins it to
 * the target node (vm-pin.ts), where it is listed from then on and where it starts. The preconditions come from the
 * domain's `migrationCheck`.
 */
import { migrationCheck, type MigrationCheck } from '@/server/domain/vm-migrate-check';
import { EXTRAS_ANNOTATION, parseExtras } from '../extras';
import { corral, corralSync } from '../errors';
import { onlyParams } from '../qemu-params';
import { upidNode } from '../translate/upid';
import { assignSlots } from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { VM_AUDIT, configContext, resolve, upid } from './qemu-common';

/** The parameters PVE 8 defines for `POST …/migrate` (the ones Corral cannot honour are refused by value below). */
const MIGRATE_PARAMS = [
  'target',
  'online',
  'with-local-disks',
  'force',
  'migration_type',
  'migration_network',
  'bwlimit',
  'targetstorage',
];

interface LocalDisk {
  volid: string;
  size: number;
  drivename: string;
  is_attached: 1;
  replicate: 0;
  is_unused: 0;
}

/** The VM's disks on storage that is not shared, as PVE lists `local_disks`: `storage:volume` and the drive key. */
async function localDisks(ctx: EndpointContext, check: MigrationCheck): Promise<LocalDisk[]> {
  const local = check.disks.filter((d) => !d.shared);
  if (!local.length) return [];
  const vm = resolve(ctx);
  const cfg = await configContext(ctx, vm);
  const slots = assignSlots(cfg.hw, parseExtras(cfg.hw.annotations[EXTRAS_ANNOTATION])).disks;
  const out: LocalDisk[] = [];
  for (const d of local) {
    const disk = cfg.hw.disks.find((h) => h.claim === d.claim);
    const storage = d.storageClass || cfg.defaultStorage || 'local-lvm';
    out.push({
      volid: `${storage}:${d.claim}`,
      size: d.sizeBytes,
      drivename: (disk && slots.get(disk.name)) ?? d.volume,
      is_attached: 1,
      replicate: 0,
      is_unused: 0,
    });
  }
  return out;
}

function check(ctx: EndpointContext) {
  const vm = resolve(ctx);
  return { vm, check: corralSync(() => migrationCheck(ctx.state.services.deps, vm.ref.namespace, vm.ref.name)) };
}

async function preconditions(ctx: EndpointContext): Promise<Record<string, unknown>> {
  onlyParams(ctx.args, ['target']);
  const { vm, check: c } = check(ctx);
  const disks = await localDisks(ctx, c);
  const here = ctx.state.vmNode(vm.row);
  const allowed: string[] = [];
  const notAllowed: Record<string, { reason: string; unavailable_storages?: string[] }> = {};
  for (const t of c.targets) {
    if (upidNode(t.name) === here) continue; // a stopped VM that is not pinned is shown on the home node
    const reasons = [...(c.blocker ? [c.blocker] : []), ...t.reasons];
    // Offline, PVE copies local disks; here they stay on their storage and attach where the VM starts.
    const blocking = c.running ? disks : [];
    if (blocking.length)
      reasons.push(`local disks cannot be live-migrated: ${blocking.map((d) => d.volid).join(', ')}`);
    if (reasons.length)
      notAllowed[upidNode(t.name)] = {
        reason: reasons.join('; '),
        ...(blocking.length
          ? { unavailable_storages: [...new Set(blocking.map((d) => d.volid.split(':')[0] ?? ''))] }
          : {}),
      };
    else allowed.push(upidNode(t.name));
  }
  return {
    running: c.running ? 1 : 0,
    allowed_nodes: allowed,
    not_allowed_nodes: notAllowed,
    local_disks: disks,
    local_resources: [],
    'mapped-resources': [],
  };
}

async function migrate(ctx: EndpointContext): Promise<string> {
  onlyParams(ctx.args, MIGRATE_PARAMS);
  const target = ctx.args.requireString('target');
  const online = ctx.args.bool('online') ?? false;
  const withLocalDisks = ctx.args.bool('with-local-disks') ?? false;
  ctx.args.bool('force');
  const type = ctx.args.string('migration_type');
  if (type !== undefined && type !== 'secure' && type !== 'insecure')
    throw paramError({ migration_type: `value '${type}' does not have a value in the enumeration 'secure, insecure'` });
  const bwlimit = ctx.args.int('bwlimit', { min: 0 });
  if (bwlimit)
    throw paramError({ bwlimit: 'a bandwidth limit is a cluster-wide MigrationPolicy in KubeVirt, not per migration' });
  if (ctx.args.string('targetstorage') !== undefined)
    throw paramError({
      targetstorage: "KubeVirt migrations keep their volumes; use move_disk to change a disk's storage",
    });

  const { vm, check: c } = check(ctx);
  const node = ctx.state.nodeNames().find((n) => upidNode(n) === target);
  if (!node) throw paramError({ target: `no such cluster node '${target}'` });
  const from = ctx.state.vmNode(vm.row);
  if (upidNode(node) === from) throw paramError({ target: 'target is local node.' });
  if (c.running) {
    if (!online) throw new ProxmoxError(500, "can't migrate running VM without --online");
    const local = c.disks.filter((d) => !d.shared);
    if (local.length) {
      const names = local.map((d) => `'${d.storageClass || 'local-lvm'}:${d.claim}'`).join(', ');
      throw new ProxmoxError(
        500,
        withLocalDisks
          ? `can't live migrate local disk ${names}: KubeVirt live migration needs ReadWriteMany volumes; move the disk to shared storage first`
          : `can't live migrate attached local disks without with-local-disks option (${names})`,
      );
    }
  }
  // Stopped: PVE ignores `online` then ("VM isn't running. Doing offline migration instead.") and so does Corral.
  const reasons = c.targets.find((t) => t.name === node)?.reasons ?? [];
  if (c.blocker || reasons.length)
    throw new ProxmoxError(
      500,
      `migration of VM ${vm.vmid} to node '${target}' is not possible: ${[c.blocker, ...reasons].filter(Boolean).join('; ')}`,
    );
  const taskId = await corral(
    ctx.state.services.vms.migrate(ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, node),
  );
  return upid(ctx, taskId, { vmid: vm.vmid, node: from });
}

export function registerQemuMigrate(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/migrate', { privilege: VM_AUDIT('VM.Audit'), handle: preconditions });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/migrate', { privilege: VM_AUDIT('VM.Migrate'), handle: migrate });
}
