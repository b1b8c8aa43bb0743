/**
 * Cross-cluster move of a container (CT), the commit: the preflight runs again (409 with its list when refused),
 * then a `ct-move` task in the source's journal does, logging each step: stop the CT if it runs (deleting its pod,
 * as Stop does, and remembering that it ran), export its data claim (a VirtualMachineExport whose source is the
 * PersistentVolumeClaim), upload its files into a DataVolume at the destination (KubeVirt exports a plain filesystem
 * claim only as dir/tar.gz: the tar.gz is gunzipped on the way and CDI unpacks the tar into an archive DataVolume's
 * claim; a claim holding a disk image goes raw into a kubevirt one), then give its claim the CT's labels,
 * tags, description and spec (renamed) and leave it standing on its own as a CT's claim is (no DataVolume owner),
 * verify that the destination sees the CT, start it there if it ran, and delete the source only when asked.
 *
 * A failure at any step deletes at the destination what the move created (newest first) and puts the source back
 * as it was (its pod built again when it had been running); the log says what was undone, and the same move can be
 * run again. The bytes go through the same transport and upload step as a VM's disk (move-commit.ts). As a VM's
 * move, it shows in the destination's journal too (move-journal.ts), can be cancelled until the moved CT is verified
 * (the step under way is aborted, then the same rollback runs), and files the moved CT in the source's pool
 * (move-outcome.ts).
 */
import { CorralError, describeError } from '../errors';
import type { MoveAccepted, MoveInput } from '../schemas/move';
import type { KObject } from './cluster-port';
import { podPhase, podTrouble, findCt } from './ct-rows';
import { deleteCt } from './ct-ops';
import { ANNOTATION_CT_DESCRIPTION, ANNOTATION_CT_SPEC, ctLabels, podManifest, type CtSpec } from './ct-spec';
import type { Caller, DomainDeps } from './deps';
import { uploadProxyBase } from './datavolume-upload';
import { LABEL_MANAGED_BY, LABEL_TAG_PREFIX } from './labels';
import { LABEL_MOVE_TASK, undoCreated, uploadDisk, type Created, type DiskTransfer } from './move-commit';
import { until } from './move-source';
import { CT_MOVE_ACTION, planCtMove, type CtMovePlanned } from './move-ct-preflight';
import { startMoveTask } from './move-journal';
import { settleSource } from './move-outcome';
import { formatRef } from './pools-path';
import { TaskCancelled, type TaskHandle } from './tasks';
import { openExport, type ExportSession } from './vm-export';
import { asDict, asString } from './vm-facts';

/** CT moves started in this process and not ended: a second commit of the same CT is refused at once. */
const moving = new Set<string>();

export async function commitCtMove(
  deps: DomainDeps,
  caller: Caller,
  input: MoveInput,
  transfer: DiskTransfer,
): Promise<MoveAccepted> {
  const planned = await planCtMove(deps, input);
  const { refusals, plan } = planned.preflight;
  if (refusals.length > 0)
    throw new CorralError('CONFLICT', `move refused: ${refusals.map((r) => `${r.reason} (${r.remedy})`).join('; ')}`);
  const { source, destination } = plan;
  const key = formatRef(source);
  if (moving.has(key))
    throw new CorralError(
      'CONFLICT',
      `move refused: a move of CT ${source.namespace}/${source.name} is already running`,
    );
  moving.add(key);
  const task = startMoveTask(
    planned.source,
    planned.target,
    CT_MOVE_ACTION,
    caller.identity.login,
    `move CT ${key} → ${formatRef(destination)}`,
    planned.preflight,
  );
  void runCtMove(planned, caller, task, transfer).finally(() => moving.delete(key));
  return { task: task.id, context: source.context, ref: formatRef(destination) };
}

/** The moved claim's metadata: the source claim's own labels and notes (not its vmid), the CT's under its new name. */
function claimMetadata(planned: CtMovePlanned) {
  const from = planned.ct.pvc.metadata;
  const tags = Object.fromEntries(Object.entries(from.labels ?? {}).filter(([k]) => k.startsWith(LABEL_TAG_PREFIX)));
  const description = from.annotations?.[ANNOTATION_CT_DESCRIPTION];
  return {
    labels: { ...tags, ...ctLabels(planned.spec.name) },
    annotations: {
      [ANNOTATION_CT_SPEC]: JSON.stringify(planned.spec),
      ...(description ? { [ANNOTATION_CT_DESCRIPTION]: description } : {}),
      'corral.dev/moved-from': formatRef(planned.preflight.plan.source),
    },
  };
}

/**
 * The DataVolume the CT's volume is uploaded into: `archive` when its files travel as a tar (CDI unpacks them into
 * the claim's filesystem), `kubevirt` when the source claim was a disk image and its raw bytes travel.
 */
function uploadTarget(planned: CtMovePlanned, taskId: string, contentType: 'kubevirt' | 'archive'): KObject {
  const { disk, spec } = planned;
  // Not a CT's claim yet (no CT labels or spec): the destination lists it as a CT only once its bytes are in.
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name: disk.to,
      namespace: spec.namespace,
      labels: { [LABEL_MOVE_TASK]: taskId, [LABEL_MANAGED_BY]: 'corral' },
      annotations: { 'cdi.kubevirt.io/storage.bind.immediate.requested': 'true' },
    },
    spec: {
      contentType,
      source: { upload: {} },
      storage: {
        accessModes: ['ReadWriteOnce'],
        ...(disk.storageClass ? { storageClassName: disk.storageClass } : {}),
        resources: { requests: { storage: disk.size } },
      },
    },
  };
}

async function runCtMove(planned: CtMovePlanned, caller: Caller, task: TaskHandle, transfer: DiskTransfer) {
  const { source: from, target, disk, spec } = planned;
  const { source, destination, scratch } = planned.preflight.plan;
  const created: Created[] = [];
  let wasRunning = false;
  let session: ExportSession | undefined;
  const where = `${destination.namespace}/${destination.name} in ${destination.context}`;
  // A cancel aborts the step running now (a wait, the copy); the rollback below then undoes the move.
  const abort = new AbortController();
  const { signal } = abort;
  const stopCancel = task.onCancel((by) => abort.abort(new TaskCancelled(by)));
  try {
    // 1. Stop the CT (its pod goes; the volume stays), remembering that it ran.
    const pod = from.cluster.cache.get('Pod', source.namespace, source.name);
    if (pod) {
      wasRunning = !pod.metadata.deletionTimestamp;
      await from.cluster.remove('Pod', source.namespace, source.name);
      task.log(`stopping CT ${source.namespace}/${source.name} (its pod was ${podPhase(pod)})`);
      await until(
        from,
        'the CT to stop',
        () => (from.cluster.cache.get('Pod', source.namespace, source.name) ? undefined : true),
        signal,
      );
      task.log('CT stopped; its volume is kept');
    }
    task.progress(10);

    // 2. Export its volume; 3. upload it into a claim at the destination that is the CT's. A CT's claim is a plain
    // filesystem, which KubeVirt exports only as files (dir, tar.gz): its tar.gz is unpacked on the way and the tar
    // uploaded into an archive DataVolume. A claim holding a disk image (raw offered) travels as raw bytes.
    session = await openExport(from, caller, source.namespace, source.name, {
      source: { kind: 'PersistentVolumeClaim', name: disk.claim },
      volume: disk.claim,
      labels: { [LABEL_MOVE_TASK]: task.id },
      archive: true,
    });
    const files = session.format === 'tar.gz';
    task.log(`export ${session.object} of volume ${disk.claim} ready in ${source.context} (task ${session.task.id})`);
    task.log(
      files
        ? `volume ${disk.claim} is a filesystem: its files travel as tar.gz from the export, unpacked on the way into an archive DataVolume`
        : `volume ${disk.claim} is a disk image: its raw bytes travel into a kubevirt DataVolume`,
    );
    signal.throwIfAborted();
    task.progress(15);
    const proxy = uploadProxyBase(await target.cluster.fetch('CDIConfig', undefined, 'config'));
    const bytes = await uploadDisk(
      target,
      transfer,
      uploadTarget(planned, task.id, files ? 'archive' : 'kubevirt'),
      { url: session.url, token: session.token, ...(session.ca ? { ca: session.ca } : {}) },
      {
        proxy,
        scratch,
        signal,
        gunzip: files,
        progress: (done, total) => task.progress(15 + (total > 0 ? (70 * done) / total : 0)),
        created: () => {
          created.push({ kind: 'DataVolume', namespace: destination.namespace, name: disk.to });
          task.log(`DataVolume ${destination.namespace}/${disk.to} created in ${destination.context} (${disk.size})`);
        },
      },
    );
    task.log(
      `volume ${disk.claim}: ${bytes} bytes ${files ? 'of tar ' : ''}uploaded into ${disk.to}${scratch ? ' (staged on Corral)' : ''}`,
    );
    await session.close();
    session = undefined;
    await until(
      target,
      `DataVolume ${disk.to} to succeed`,
      () => {
        const phase = asString(
          asDict(target.cluster.cache.get('DataVolume', destination.namespace, disk.to)?.status).phase,
        );
        if (phase === 'Failed') throw new CorralError('BAD_GATEWAY', `DataVolume ${disk.to} failed after the upload`);
        return phase === 'Succeeded' ? true : undefined;
      },
      signal,
    );
    signal.throwIfAborted();
    task.progress(85);

    // The claim stands on its own, as a CT's does: no DataVolume owner (deleting the CT deletes just the claim).
    await target.cluster.patch('PersistentVolumeClaim', destination.namespace, disk.to, {
      metadata: {
        labels: { ...claimMetadata(planned).labels, [LABEL_MOVE_TASK]: null },
        annotations: claimMetadata(planned).annotations,
        ownerReferences: null,
      },
    });
    created.push({ kind: 'PersistentVolumeClaim', namespace: destination.namespace, name: disk.to });
    await target.cluster.remove('DataVolume', destination.namespace, disk.to);
    created.splice(
      created.findIndex((c) => c.kind === 'DataVolume'),
      1,
    );
    task.log(`claim ${destination.namespace}/${disk.to} carries the CT's spec; its DataVolume is removed`);

    // 4. Verify.
    await until(
      target,
      `CT ${where} to appear`,
      () => {
        const moved = findCt(target, destination.namespace, destination.name);
        return moved && !moved.pvc.metadata.ownerReferences?.length && asDict(moved.pvc.status).phase === 'Bound'
          ? true
          : undefined;
      },
      signal,
    );
    task.log(`verified: CT ${where} exists, its volume Bound`);
    signal.throwIfAborted();
    // From here on the move finishes: the CT is whole at the destination.
    stopCancel();
    task.progress(90);

    // 5. Start it when the source ran.
    if (wasRunning) {
      await startPod(target, spec, created, task);
      task.log(`started CT ${where}`);
    }
    task.progress(96);
  } catch (err) {
    stopCancel();
    await rollBack(planned, task, created, wasRunning, session, signal.aborted ? signal.reason : err);
    return;
  }

  // 6. The source: kept stopped, or deleted when asked.
  await settleSource(from, task, planned.preflight.plan, 'CT', () =>
    deleteCt(from, caller, source.namespace, source.name),
  );
}

/** Builds the CT's pod from its spec (as Start does) and waits until it runs; `created` records it first. */
async function startPod(deps: DomainDeps, spec: CtSpec, created: Created[], task: TaskHandle) {
  await deps.cluster.create('Pod', podManifest(spec));
  created.push({ kind: 'Pod', namespace: spec.namespace, name: spec.name });
  task.log(`Pod ${spec.namespace}/${spec.name} created in ${deps.cluster.info.context}`);
  await until(deps, `CT ${spec.namespace}/${spec.name} to run`, () => {
    const pod = deps.cluster.cache.get('Pod', spec.namespace, spec.name);
    const phase = podPhase(pod);
    if (phase === 'Failed' || phase === 'Succeeded')
      throw new CorralError('CONFLICT', `the pod of CT ${spec.namespace}/${spec.name} ended (${phase})`);
    if (/^(ErrImagePull|ImagePullBackOff|InvalidImageName|CrashLoopBackOff)\b/.test(podTrouble(pod)))
      throw new CorralError('CONFLICT', `CT ${spec.namespace}/${spec.name} cannot start: ${podTrouble(pod)}`);
    return phase === 'Running' ? true : undefined;
  });
}

async function rollBack(
  planned: CtMovePlanned,
  task: TaskHandle,
  created: Created[],
  wasRunning: boolean,
  session: ExportSession | undefined,
  err: unknown,
) {
  const { source } = planned.preflight.plan;
  const cancelled = err instanceof TaskCancelled;
  task.log(`${cancelled ? '' : 'failed: '}${describeError(err)}; rolling back`);
  await session?.close(err);
  await undoCreated(planned.target, created, task);
  if (wasRunning) {
    const { spec } = planned.ct;
    // The claim is the source's own and untouched; only its pod went. Wait for the old pod to be gone first.
    const back = await until(planned.source, 'the old pod to go', () =>
      planned.source.cluster.cache.get('Pod', spec.namespace, spec.name)?.metadata.deletionTimestamp ? undefined : true,
    )
      .then(async () => {
        if (!planned.source.cluster.cache.get('Pod', spec.namespace, spec.name))
          await planned.source.cluster.create('Pod', podManifest(spec));
      })
      .then(
        () => `started the source CT ${source.namespace}/${source.name} again`,
        (e: unknown) => `could not start the source CT again: ${describeError(e)}; start it by hand`,
      );
    task.log(back);
  } else task.log(`the source CT ${source.namespace}/${source.name} was not touched (it was stopped)`);
  task.log(cancelled ? 'nothing moved' : 'nothing moved; fix the cause and move again');
  task.fail(err);
}
