/**
 * `POST /nodes/{node}/qemu/{vmid}/move_disk {disk, storage, delete}`: PVE's storage move, served by the domain's
 * `moveDisk` (a CDI clone of the claim onto the storage's StorageClass, then the VM uses the copy) as a `qmmove`
 * task. The slot (`scsi0`) is found as `GET …/config` shows it; a running VM's disk moves by a volume migration.
 */
import { moveDisk } from '@/server/domain/vm-disk-move';
import { corral } from '../errors';
import { EXTRAS_ANNOTATION, parseExtras, serializeExtras } from '../extras';
import { onlyParams } from '../qemu-params';
import { findStorage } from '../storage-map';
import { assignSlots, vmConfig } from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { VM_AUDIT, configContext, resolve, upid } from './qemu-common';

const PARAMS = [
  'disk',
  'storage',
  'delete',
  'digest',
  'bwlimit',
  'format',
  'target-vmid',
  'target-disk',
  'target-digest',
];

async function move(ctx: EndpointContext): Promise<string> {
  const { args } = ctx;
  onlyParams(args, PARAMS);
  for (const key of ['target-vmid', 'target-disk', 'target-digest'])
    if (args.has(key)) throw paramError({ [key]: 'moving a disk to another VM is not supported by Corral' });
  const format = args.string('format');
  if (format !== undefined && format !== 'raw')
    throw paramError({ format: 'KubeVirt volumes are raw; only format=raw is possible' });
  args.int('bwlimit', { min: 0 });
  const slot = args.requireString('disk');
  const storageId = args.requireString('storage');
  const deleteSource = args.bool('delete') ?? false;
  const vm = resolve(ctx);
  const cfg = await configContext(ctx, vm);
  const digest = args.string('digest');
  if (digest && digest !== vmConfig(cfg).digest)
    throw new ProxmoxError(500, 'detected modified configuration - file changed by other user? Try again.');
  const extras = parseExtras(cfg.hw.annotations[EXTRAS_ANNOTATION]);
  const slots = assignSlots(cfg.hw, extras).disks;
  const diskName = [...slots.entries()].find(([, s]) => s === slot)?.[0];
  const disk = cfg.hw.disks.find((d) => d.name === diskName);
  if (!disk) throw paramError({ disk: `disk '${slot}' does not exist` });
  if (disk.device === 'cdrom') throw paramError({ disk: `you can't move a cdrom drive` });
  const storage = await findStorage(ctx.state.services, storageId);
  if (!storage) throw paramError({ storage: `storage '${storageId}' does not exist` });
  if (!storage.storageClass) throw paramError({ storage: `storage '${storageId}' does not support vm images` });
  if (disk.storageClass && storage.storageClass === disk.storageClass)
    throw new ProxmoxError(500, "you can't move to the same storage with same format");
  const taskId = await corral(
    moveDisk(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, {
      disk: disk.name,
      storageClass: storage.storageClass,
      deleteSource,
      // The config then names the storage the client moved the disk to (with the copy's own volume name).
      annotations: {
        [EXTRAS_ANNOTATION]: serializeExtras({
          ...extras,
          disks: { ...extras.disks, [slot]: { options: extras.disks[slot]?.options ?? {}, storage: storageId } },
        }),
      },
    }),
  );
  return upid(ctx, taskId, { vmid: vm.vmid, node: ctx.state.vmNode(vm.row) });
}

export function registerQemuMoveDisk(table: Routes): void {
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/move_disk', {
    privilege: VM_AUDIT('VM.Config.Disk'),
    handle: move,
  });
}
