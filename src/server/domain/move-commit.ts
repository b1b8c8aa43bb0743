/**
 * Cross-cluster move (ADR-0010), the commit: the preflight runs again (409 with its list when refused), then a task
 * in the source's journal does, logging each step: stop the source if it runs (remembering how it ran), export its
 * disks (KubeVirt's VirtualMachineExport, the path `GET …/export` uses), upload each into a new DataVolume at the
 * destination through CDI's upload proxy, copy the cloud-init Secrets, create the VM there (move-spec.ts), verify
 * (every DataVolume Succeeded, the VM exists), start it if the source ran, and delete the source only when asked.
 *
 * A failure at any step deletes at the destination exactly what this move created (newest first) and puts the source
 * back as it was (started again when it had been running); the log says what was undone, and the same move can be
 * run again. Moving the bytes is the transport's (`DiskTransfer`, an HTTP client the router hands in): the domain
 * only finds the two endpoints.
 *
 * Until the moved VM is verified and started, the task can be cancelled (POST /api/tasks/{id}/cancel): the step
 * running then is aborted (a disk copy stops mid-stream) and the same rollback runs; the task ends `cancelled by
 * <login>`. The destination's journal shows the move too (move-journal.ts), and after success the moved VM joins
 * the source's pool (move-outcome.ts).
 */
import { CorralError, describeError } from '../errors';
import type { MoveAccepted, MoveInput } from '../schemas/move';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { LABEL_MANAGED_BY, LABEL_VM } from './labels';
import { uploadProxyBase } from './datavolume-upload';
import { startMoveTask } from './move-journal';
import { restoreSource, stopSource, until } from './move-source';
import { settleSource } from './move-outcome';
import { movedVm } from './move-spec';
import { planMove, type MovePlanned } from './move-preflight';
import { formatRef } from './pools-path';
import { TaskCancelled, type TaskHandle } from './tasks';
import { deleteVm } from './vm-delete';
import { openVmExport, type ExportSession } from './vm-export';
import { asArray, asDict, asString } from './vm-facts';

/** One end of a disk copy: the export server's raw image, or CDI's upload proxy, with the token each wants. */
export interface DiskEndpoint {
  url: string;
  token: string;
  /** PEM CA of the server's certificate, when it published one. */
  ca?: string;
}

/** Moves a disk image's bytes from an export server to an upload proxy (src/server/http/move-transfer.ts). */
export interface DiskTransfer {
  /** Resolves with the number of bytes the upload proxy took; rejects with what went wrong. */
  copy(
    from: DiskEndpoint,
    to: DiskEndpoint,
    options: {
      scratch: boolean;
      progress(bytes: number, total: number): void;
      signal?: AbortSignal;
      /**
       * The source is gzipped (a filesystem's `tar.gz`) and the upload proxy takes it plain (a tar): decompress on
       * the way, so the length sent is not known up front (`total` is then the compressed length, or 0).
       */
      gunzip?: boolean;
    },
  ): Promise<number>;
}

/** Set on the DataVolumes and Secrets a move creates: the task that created them. */
export const LABEL_MOVE_TASK = 'corral.dev/move-task';

/** Moves started in this process and not ended: a second commit of the same VM is refused before the task starts. */
const moving = new Set<string>();

export function refusalMessage(planned: MovePlanned): string {
  return `move refused: ${planned.preflight.refusals.map((r) => `${r.reason} (${r.remedy})`).join('; ')}`;
}

export async function commitMove(
  deps: DomainDeps,
  caller: Caller,
  input: MoveInput,
  transfer: DiskTransfer,
): Promise<MoveAccepted> {
  const planned = await planMove(deps, input);
  if (!planned.preflight.ok) throw new CorralError('CONFLICT', refusalMessage(planned));
  const { source, destination } = planned.preflight.plan;
  const key = formatRef(source);
  if (moving.has(key))
    throw new CorralError('CONFLICT', `move refused: a move of ${source.namespace}/${source.name} is already running`);
  moving.add(key);
  const to = formatRef(destination);
  const task = startMoveTask(
    planned.source,
    planned.target,
    'move',
    caller.identity.login,
    `move ${key} → ${to}`,
    planned.preflight,
  );
  void runMove(planned, caller, task, transfer).finally(() => moving.delete(key));
  return { task: task.id, context: source.context, ref: to };
}

export interface Created {
  kind: Kind;
  namespace: string;
  name: string;
}

async function runMove(planned: MovePlanned, caller: Caller, task: TaskHandle, transfer: DiskTransfer) {
  const { source: from, target, vm, disks, preflight } = planned;
  const { source, destination, scratch } = preflight.plan;
  const created: Created[] = [];
  let restoreStrategy: string | undefined;
  let session: ExportSession | undefined;
  const where = `${destination.namespace}/${destination.name} in ${destination.context}`;
  // A cancel aborts the step running now (a wait, a disk copy); the rollback below then undoes the move.
  const abort = new AbortController();
  const { signal } = abort;
  const stopCancel = task.onCancel((by) => abort.abort(new TaskCancelled(by)));
  try {
    // 1. Stop the source, remembering how it ran.
    restoreStrategy = await stopSource(from, task, source, vm, signal);
    task.progress(10);

    // 2. Export its disks; 3. upload each into a DataVolume at the destination.
    if (disks.length > 0) {
      session = await openVmExport(from, caller, source.namespace, source.name);
      task.log(`export ${session.object} ready in ${source.context} (task ${session.task.id})`);
      signal.throwIfAborted();
      task.progress(15);
      const exp = await from.cluster.fetch('VirtualMachineExport', source.namespace, session.object);
      const proxy = uploadProxyBase(await target.cluster.fetch('CDIConfig', undefined, 'config'));
      for (const [i, disk] of disks.entries()) {
        signal.throwIfAborted();
        const link = rawLink(exp, disk.claim);
        if (!link) throw new CorralError('BAD_GATEWAY', `the export has no raw image of disk ${disk.volume}`);
        const share = 70 / disks.length;
        const bytes = await uploadDisk(
          target,
          transfer,
          uploadDataVolume(destination.namespace, destination.name, disk, task.id),
          { url: link.url, token: session.token, ...(link.ca ? { ca: link.ca } : {}) },
          {
            proxy,
            scratch,
            signal,
            progress: (done, total) => task.progress(15 + share * i + (total > 0 ? (share * done) / total : 0)),
            created: () => {
              created.push({ kind: 'DataVolume', namespace: destination.namespace, name: disk.to });
              task.log(
                `DataVolume ${destination.namespace}/${disk.to} created in ${destination.context} (${disk.size})`,
              );
            },
          },
        );
        task.log(`disk ${disk.volume}: ${bytes} bytes uploaded into ${disk.to}${scratch ? ' (staged on Corral)' : ''}`);
      }
      await session.close();
      session = undefined;
    }
    task.progress(85);

    // Cloud-init Secrets, then the VM itself.
    for (const [fromName, toName] of planned.secrets) {
      signal.throwIfAborted();
      const secret = await from.cluster.fetch('Secret', source.namespace, fromName);
      if (!secret) throw new CorralError('NOT_FOUND', `cloud-init Secret ${source.namespace}/${fromName} is missing`);
      await target.cluster.create('Secret', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: toName,
          namespace: destination.namespace,
          labels: { [LABEL_VM]: destination.name, [LABEL_MOVE_TASK]: task.id },
        },
        ...(secret.type ? { type: secret.type } : {}),
        ...(secret.data ? { data: secret.data } : {}),
      });
      created.push({ kind: 'Secret', namespace: destination.namespace, name: toName });
      task.log(`Secret ${destination.namespace}/${toName} copied`);
    }
    const vmObject = movedVm(vm, {
      namespace: destination.namespace,
      name: destination.name,
      disks: new Map(disks.map((d) => [d.volume, d.to])),
      secrets: planned.secrets,
      dropNetworks: planned.dropNetworks,
      movedFrom: formatRef(source),
    });
    const made = await target.cluster.create('VirtualMachine', vmObject);
    created.push({ kind: 'VirtualMachine', namespace: destination.namespace, name: destination.name });
    task.log(`VM ${where} created (Halted)`);
    // The moved VM owns its disks and Secrets, so deleting it later takes them along.
    const owner = [
      {
        apiVersion: made.apiVersion ?? 'kubevirt.io/v1',
        kind: 'VirtualMachine',
        name: destination.name,
        uid: made.metadata.uid ?? '',
      },
    ];
    for (const c of created)
      if (c.kind !== 'VirtualMachine')
        await target.cluster.patch(c.kind, c.namespace, c.name, { metadata: { ownerReferences: owner } });
    task.progress(88);

    // 4. Verify.
    await until(
      target,
      'the uploaded disks to succeed',
      () => {
        for (const d of disks) {
          const phase = asString(
            asDict(target.cluster.cache.get('DataVolume', destination.namespace, d.to)?.status).phase,
          );
          if (phase === 'Failed') throw new CorralError('BAD_GATEWAY', `DataVolume ${d.to} failed after the upload`);
          if (phase !== 'Succeeded') return undefined;
        }
        return true;
      },
      signal,
    );
    if (!(await target.cluster.fetch('VirtualMachine', destination.namespace, destination.name)))
      throw new CorralError('CONFLICT', `VM ${where} disappeared before it was verified`);
    task.log(`verified: ${disks.length} DataVolume${disks.length === 1 ? '' : 's'} Succeeded, VM ${where} exists`);
    task.progress(92);

    // 5. Start it when the source ran.
    signal.throwIfAborted();
    if (restoreStrategy !== undefined) {
      const strategy = restoreStrategy === 'Halted' ? 'Always' : restoreStrategy;
      await target.cluster.patch('VirtualMachine', destination.namespace, destination.name, {
        spec: { runStrategy: strategy, running: null },
      });
      task.log(`started ${where} (runStrategy ${strategy})`);
    }
    task.progress(96);
    // The last point a cancel undoes the move: from here on it has happened (synchronously after the check).
    signal.throwIfAborted();
    stopCancel();
  } catch (err) {
    stopCancel();
    await rollBack(planned, task, created, restoreStrategy, session, signal.aborted ? signal.reason : err);
    return;
  }

  // 6. The source: kept stopped, or deleted when asked.
  await settleSource(from, task, preflight.plan, 'VM', () => deleteVm(from, caller, source.namespace, source.name));
}

async function rollBack(
  planned: MovePlanned,
  task: TaskHandle,
  created: Created[],
  restoreStrategy: string | undefined,
  session: ExportSession | undefined,
  err: unknown,
) {
  const { source } = planned.preflight.plan;
  const cancelled = err instanceof TaskCancelled;
  task.log(`${cancelled ? '' : 'failed: '}${describeError(err)}; rolling back`);
  await session?.close(err);
  await undoCreated(planned.target, created, task);
  await restoreSource(planned.source, task, source, restoreStrategy);
  task.log(cancelled ? 'nothing moved' : 'nothing moved; fix the cause and move again');
  task.fail(err);
}

/** Deletes at the destination what a move created there, newest first, logging each deletion. */
export async function undoCreated(target: DomainDeps, created: Created[], task: TaskHandle): Promise<void> {
  const context = target.cluster.info.context;
  for (const c of [...created].reverse()) {
    const removed = await target.cluster.remove(c.kind, c.namespace, c.name).catch((e: unknown) => e);
    task.log(
      removed instanceof Error
        ? `could not delete ${c.kind} ${c.namespace}/${c.name} in ${context}: ${removed.message}; delete it by hand`
        : `deleted ${c.kind} ${c.namespace}/${c.name} in ${context}`,
    );
  }
  if (created.length === 0) task.log(`nothing had been created in ${context}`);
}

/**
 * Creates the upload DataVolume `dv` at the destination (`created` runs right after, so a rollback deletes it),
 * waits until CDI takes an upload, asks for a token and has the transport copy `from`'s bytes into it.
 */
export async function uploadDisk(
  target: DomainDeps,
  transfer: DiskTransfer,
  dv: KObject,
  from: DiskEndpoint,
  options: {
    proxy: string;
    scratch: boolean;
    progress(bytes: number, total: number): void;
    created(): void;
    /** Aborts the wait and the copy (a cancelled move). */
    signal?: AbortSignal;
    /** Decompress the source on the way (DiskTransfer `gunzip`). */
    gunzip?: boolean;
  },
): Promise<number> {
  const namespace = dv.metadata.namespace ?? '';
  const name = dv.metadata.name ?? '';
  await target.cluster.create('DataVolume', dv);
  options.created();
  await until(
    target,
    `DataVolume ${name} to wait for an upload`,
    () => {
      const phase = asString(asDict(target.cluster.cache.get('DataVolume', namespace, name)?.status).phase);
      if (phase === 'Failed') throw new CorralError('BAD_GATEWAY', `DataVolume ${name} failed before the upload`);
      return phase === 'UploadReady' ? true : undefined;
    },
    options.signal,
  );
  const granted = await target.cluster.create('UploadTokenRequest', {
    apiVersion: 'upload.cdi.kubevirt.io/v1beta1',
    kind: 'UploadTokenRequest',
    metadata: { name, namespace },
    spec: { pvcName: name },
  });
  const token = asString(asDict(granted.status).token);
  if (!token) throw new CorralError('BAD_GATEWAY', `CDI in ${target.cluster.info.context} returned no upload token`);
  const { scratch, progress, signal, gunzip } = options;
  return transfer.copy(
    from,
    { url: `${options.proxy}/v1beta1/upload`, token },
    { scratch, progress, ...(signal ? { signal } : {}), ...(gunzip ? { gunzip } : {}) },
  );
}

/** The raw image of `volume` in a Ready export (external link first, else internal) and its server's CA. */
export function rawLink(exp: KObject | undefined, volume: string): { url: string; ca?: string } | undefined {
  const links = asDict(asDict(exp?.status).links);
  for (const which of ['external', 'internal']) {
    const link = asDict(links[which]);
    const vol = asArray(link.volumes)
      .map(asDict)
      .find((v) => asString(v.name) === volume);
    const url = asString(
      asArray(vol?.formats)
        .map(asDict)
        .find((f) => asString(f.format) === 'raw')?.url,
    );
    if (url) return { url, ...(asString(link.cert) ? { ca: asString(link.cert) } : {}) };
  }
  return undefined;
}

function uploadDataVolume(
  namespace: string,
  vm: string,
  disk: { to: string; size: string; storageClass: string },
  taskId: string,
): KObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name: disk.to,
      namespace,
      labels: { [LABEL_VM]: vm, [LABEL_MOVE_TASK]: taskId, [LABEL_MANAGED_BY]: 'corral' },
      annotations: { 'cdi.kubevirt.io/storage.bind.immediate.requested': 'true' },
    },
    spec: {
      contentType: 'kubevirt',
      source: { upload: {} },
      storage: {
        ...(disk.storageClass ? { storageClassName: disk.storageClass } : {}),
        resources: { requests: { storage: disk.size } },
      },
    },
  };
}
