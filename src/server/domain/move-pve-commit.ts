/**
 * Move to a Proxmox VE host (ADR-0010, backend `pve`), the doing half: the preflight runs again (409 with its list
 * when refused), then a `move` task in the source cluster's journal stops the source if it runs, exports its disks
 * (KubeVirt's VirtualMachineExport), uploads each raw image to the host's import storage (PVE 8.2's `import`
 * content; the bytes stream from the export server through Corral to PVE), creates the VM importing them
 * (`scsiN=<storage>:0,import-from=<import storage>:import/<file>`) and waits for PVE's task, removes the uploaded
 * images, starts the VM if the source ran, and keeps the source unless `deleteSource`.
 *
 * A failure at any step deletes on the host exactly what this move made there (the VM, the uploaded images), closes
 * the export and starts the source again if it had been running; the log says what was undone, and the same move
 * can be run again. Until the VM is created and started on the host the task can be cancelled (POST
 * /api/tasks/{id}/cancel): a wait or an upload under way is stopped (the upload request is aborted), a PVE task
 * being waited for ends first, and the same rollback runs. Reading the export's bytes is the transport's
 * (`ImageSource`, src/server/http); talking to PVE is the PveHost's (src/server/pve-client).
 */
import type { Readable } from 'node:stream';
import { CorralError, describeError } from '../errors';
import type { MoveAccepted, MoveInput } from '../schemas/move';
import type { Caller, DomainDeps } from './deps';
import { rawLink, type DiskEndpoint } from './move-commit';
import { restoreSource, stopSource } from './move-source';
import { planPveMove, type PvePlanned } from './move-pve';
import { PveFailure } from './move-pve-port';
import { formatRef } from './pools-path';
import { TaskCancelled, type TaskHandle } from './tasks';
import { deleteVm } from './vm-delete';
import { openVmExport, type ExportSession } from './vm-export';

/** Opens the raw image an export server hands out (src/server/http/move-pve-transfer.ts). */
export interface ImageSource {
  /** `onBytes` hears how many bytes have been read so far, as they pass. */
  open(from: DiskEndpoint, onBytes?: (bytes: number) => void): Promise<{ body: Readable; bytes: number }>;
}

/** Moves to PVE started in this process and not ended: a second commit of the same VM is refused at once. */
const moving = new Set<string>();

export async function commitPveMove(
  deps: DomainDeps,
  caller: Caller,
  input: MoveInput,
  images: ImageSource,
): Promise<MoveAccepted> {
  const planned = await planPveMove(deps, input);
  const { preflight } = planned;
  if (!preflight.ok)
    throw new CorralError(
      'CONFLICT',
      `move refused: ${preflight.refusals.map((r) => `${r.reason} (${r.remedy})`).join('; ')}`,
    );
  const { source } = preflight.plan;
  const key = formatRef(source);
  if (moving.has(key))
    throw new CorralError('CONFLICT', `move refused: a move of ${source.namespace}/${source.name} is already running`);
  moving.add(key);
  const task = planned.source.journal.start('move', `${source.namespace}/${source.name}`, caller.identity.login);
  const to = `pve/${planned.host.name}/${planned.node}/${preflight.plan.destination.name}`;
  task.log(`move ${key} → Proxmox VE host ${planned.host.name} (${planned.host.url}), node ${planned.node}`);
  for (const w of preflight.warnings) task.log(`warning: ${w}`);
  for (const d of preflight.dropped) task.log(`not carried over: ${d}`);
  void runPveMove(planned, caller, task, images).finally(() => moving.delete(key));
  return { task: task.id, context: source.context, ref: to };
}

interface Made {
  vmid?: number;
  /** Import volumes uploaded (volume ids). */
  uploads: string[];
}

async function runPveMove(planned: PvePlanned, caller: Caller, task: TaskHandle, images: ImageSource) {
  const { source: from, vm, host, node, disks, preflight } = planned;
  const { source, destination, deleteSource } = preflight.plan;
  const waitMs = from.config.waitTimeoutMs;
  const made: Made = { uploads: [] };
  let restoreStrategy: string | undefined;
  let session: ExportSession | undefined;
  let vmid = planned.vmid;
  // A cancel aborts the step running now (a wait, an upload); the rollback below then undoes the move.
  const abort = new AbortController();
  const { signal } = abort;
  const stopCancel = task.onCancel((by) => abort.abort(new TaskCancelled(by)));
  try {
    // 1. Stop the source, remembering how it ran.
    restoreStrategy = await stopSource(from, task, source, vm, signal);
    task.progress(10);
    signal.throwIfAborted();
    vmid ??= await host.nextId();
    task.log(`the VM becomes vmid ${vmid} on ${host.name}`);

    // 2. Export the disks; 3. upload each to the import storage.
    session = await openVmExport(from, caller, source.namespace, source.name);
    task.log(`export ${session.object} ready in ${source.context} (task ${session.task.id})`);
    signal.throwIfAborted();
    task.progress(15);
    const exp = await from.cluster.fetch('VirtualMachineExport', source.namespace, session.object);
    for (const [i, disk] of disks.entries()) {
      const link = rawLink(exp, disk.claim);
      if (!link) throw new CorralError('BAD_GATEWAY', `the export has no raw image of disk ${disk.volume}`);
      const share = 55 / disks.length;
      let total = 0;
      const image = await images.open(
        { url: link.url, token: session.token, ...(link.ca ? { ca: link.ca } : {}) },
        (n) => task.progress(15 + share * i + (share * n) / Math.max(1, total)),
      );
      total = image.bytes;
      const file = `vm-${vmid}-${disk.file}`;
      const volid = `${planned.importStorage}:import/${file}`;
      task.log(`disk ${disk.volume}: uploading ${image.bytes} bytes to ${host.name} as ${volid}`);
      // Counted as made before the upload ends: a cut-off upload may still have left a file behind.
      made.uploads.push(volid);
      // A cancel stops the upload request at once, unfinished (PVE keeps no partial file; the rollback checks).
      const upid = await host
        .upload(node, planned.importStorage, 'import', file, image.body, image.bytes, signal)
        .finally(() => image.body.destroy());
      signal.throwIfAborted();
      if (upid) await host.waitTask(node, upid, waitMs);
      signal.throwIfAborted();
      task.log(`disk ${disk.volume}: ${image.bytes} bytes stored as ${volid}`);
    }
    await session.close();
    session = undefined;
    task.progress(72);

    // 4. Create the VM importing the uploaded images.
    signal.throwIfAborted();
    const params: Record<string, string | number> = { vmid, ...planned.params };
    for (const d of disks)
      params[d.key] = `${planned.diskStorage}:0,import-from=${planned.importStorage}:import/vm-${vmid}-${d.file}`;
    const createUpid = await host.createVm(node, params);
    made.vmid = vmid;
    task.log(`VM ${vmid} (${destination.name}) created on ${host.name}/${node}; importing ${disks.length} disk(s)`);
    await host.waitTask(node, createUpid, waitMs);
    task.log(`PVE task ${createUpid} OK: the disks are imported onto ${planned.diskStorage}`);
    task.progress(88);

    // 5. Start it when the source ran.
    signal.throwIfAborted();
    if (restoreStrategy !== undefined) {
      await host.waitTask(node, await host.startVm(node, vmid), waitMs);
      task.log(`started VM ${vmid} on ${host.name}`);
    }
    task.progress(94);
    // The last point a cancel undoes the move: from here on it has happened.
    signal.throwIfAborted();
    stopCancel();
  } catch (err) {
    stopCancel();
    await rollBack(planned, task, made, restoreStrategy, session, signal.aborted ? signal.reason : err);
    return;
  }

  // The uploaded images have been copied into the VM's disks: they go (a failure only leaves files to remove).
  for (const volid of made.uploads) {
    const removed = await host
      .deleteVolume(node, planned.importStorage, volid)
      .then((upid) => (upid ? host.waitTask(node, upid, waitMs) : undefined))
      .then(
        () => `removed ${volid} from ${host.name}`,
        (e: unknown) => `could not remove ${volid} from ${host.name}: ${describeError(e)}; remove it by hand`,
      );
    task.log(removed);
  }

  // 6. The source: kept stopped, or deleted when asked (a failure here leaves a finished move and says so).
  if (deleteSource) {
    try {
      const removed = await deleteVm(from, caller, source.namespace, source.name);
      task.log(`deleting the source ${source.namespace}/${source.name} in ${source.context} (task ${removed.task})`);
    } catch (err) {
      task.log(`the VM moved, but the source could not be deleted: ${describeError(err)}; delete it by hand`);
    }
  } else task.log(`the source ${source.namespace}/${source.name} stays in ${source.context}, stopped`);
  task.done(`moved ${formatRef(source)} to ${host.name} as VM ${vmid} (${destination.name}) on ${node}`);
}

async function rollBack(
  planned: PvePlanned,
  task: TaskHandle,
  made: Made,
  restoreStrategy: string | undefined,
  session: ExportSession | undefined,
  err: unknown,
) {
  const { source } = planned.preflight.plan;
  const { host, node } = planned;
  const waitMs = planned.source.config.waitTimeoutMs;
  const cancelled = err instanceof TaskCancelled;
  task.log(`${cancelled ? '' : 'failed: '}${describeError(err)}; rolling back`);
  await session?.close(err);
  if (made.vmid !== undefined) {
    const vmid = made.vmid;
    task.log(
      await host
        .deleteVm(node, vmid)
        .then((upid) => host.waitTask(node, upid, waitMs))
        .then(
          () => `deleted VM ${vmid} on ${host.name}`,
          (e: unknown) =>
            e instanceof PveFailure && e.status === 404
              ? `VM ${vmid} is not on ${host.name} (the create did not leave it)`
              : `could not delete VM ${vmid} on ${host.name}: ${describeError(e)}; delete it by hand`,
        ),
    );
  }
  for (const volid of [...made.uploads].reverse()) {
    task.log(
      await host
        .deleteVolume(node, planned.importStorage, volid)
        .then((upid) => (upid ? host.waitTask(node, upid, waitMs) : undefined))
        .then(
          () => `deleted ${volid} on ${host.name}`,
          (e: unknown) =>
            e instanceof PveFailure && e.status === 404
              ? `${volid} is not on ${host.name} (its upload stored nothing)`
              : `could not delete ${volid} on ${host.name}: ${describeError(e)}; delete it by hand`,
        ),
    );
  }
  if (made.vmid === undefined && made.uploads.length === 0) task.log(`nothing had been made on ${host.name}`);
  await restoreSource(planned.source, task, source, restoreStrategy);
  task.log(cancelled ? 'nothing moved' : 'nothing moved; fix the cause and move again');
  task.fail(err);
}
