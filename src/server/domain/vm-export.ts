/**
 * Disk export through KubeVirt's VirtualMachineExport: Corral creates one for a stopped VM, waits until its export
 * server is Ready, and hands the transport the link of the boot disk's raw image and the token to fetch it with.
 * The transport streams it to the client (src/server/http/vm-export-route.ts) and closes the session, which deletes
 * the VirtualMachineExport (its token Secret, exporter pod and Service go with it through owner references).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { LABEL_VM } from './labels';
import { TaskCancelled, type TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, printableStatus, rootVolume, vmiActive } from './vm-facts';

export const VMEXPORT_GATE_HINT =
  'the KubeVirt "VMExport" feature gate is off: add it to spec.configuration.developerConfiguration.featureGates of the KubeVirt CR';

export interface ExportSession {
  /** The VirtualMachineExport's name. */
  object: string;
  /** The boot disk's claim (the volume name in the export links). */
  volume: string;
  /**
   * What `url` serves: the raw image (a disk image: KubeVirt's `raw`), or, when the caller accepts it, the claim's
   * files as a gzipped tar (a plain filesystem such as a CT's claim, which KubeVirt exports only as `dir`/`tar.gz`).
   */
  format: 'raw' | 'tar.gz';
  /** URL of the raw image, or of the `tar.gz` archive. */
  url: string;
  /** URL of the gzipped image, when the export server compresses (KubeVirt's `gzip` format, next to the disk). */
  gzipUrl?: string;
  /** Value of the `x-kubevirt-export-token` header. */
  token: string;
  /** PEM CA of the export server's certificate, when the link carries one. */
  ca?: string;
  task: TaskHandle;
  /**
   * Ends the task (with `error` when given; a `TaskCancelled`, the reader's task cancelled, ends it `stopped: the task
   * using this export was cancelled by <login>`) and deletes the VirtualMachineExport. Idempotent.
   */
  close(error?: unknown): Promise<void>;
}

/** Why this VM's disk cannot be exported now, or its boot disk claim. */
export function exportableClaim(deps: DomainDeps, namespace: string, name: string): string {
  const vm = requireVm(deps, namespace, name);
  if (vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name)))
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} is ${printableStatus(vm)}: stop it first (its disk is in use while it runs)`,
    );
  const root = rootVolume(vm);
  if (!root || !root.claim || (root.kind !== 'dataVolume' && root.kind !== 'persistentVolumeClaim'))
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} has no disk on a PersistentVolumeClaim to export (a containerDisk is ephemeral)`,
    );
  return root.claim;
}

/** The URL of one format of `volume` (external link first, else internal) and the CA of its server. */
function pickLink(
  exp: KObject,
  volume: string,
  format: 'raw' | 'gzip' | 'tar.gz',
): { url: string; ca?: string } | undefined {
  const links = asDict(asDict(exp.status).links);
  for (const which of ['external', 'internal']) {
    const link = asDict(links[which]);
    const vol = asArray(link.volumes)
      .map(asDict)
      .find((v) => asString(v.name) === volume);
    const entry = asArray(vol?.formats)
      .map(asDict)
      .find((f) => asString(f.format) === format);
    const url = asString(entry?.url);
    if (url) return { url, ...(asString(link.cert) ? { ca: asString(link.cert) } : {}) };
  }
  return undefined;
}

/**
 * Creates the VirtualMachineExport and waits (bounded, abortable) until it is Ready. Refusals (VM running, no
 * disk, gate off) are thrown before anything is created or right after, with the export deleted again.
 */
export async function openVmExport(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  options: ExportOptions = {},
): Promise<ExportSession> {
  const volume = exportableClaim(deps, namespace, name);
  return openExport(deps, caller, namespace, name, {
    source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name },
    volume,
    labels: { [LABEL_VM]: name },
    ...options,
  });
}

export interface ExportOptions {
  signal?: AbortSignal;
  readyTimeoutMs?: number;
  /** Take the volume's `tar.gz` link when it offers no raw image (a filesystem claim, not a disk image). */
  archive?: boolean;
}

/** What a VirtualMachineExport exports: a VM's disks, or one PersistentVolumeClaim (`kind` only, no apiGroup). */
export interface ExportSource {
  apiGroup?: string;
  kind: 'VirtualMachine' | 'PersistentVolumeClaim';
  name: string;
}

/**
 * Creates a VirtualMachineExport of `source` and waits until it is Ready with a raw link of `volume` (a claim), or
 * with `archive` its `tar.gz` link when KubeVirt offers no raw one (the claim is a plain filesystem: KubeVirt gives
 * raw/gzip only for disk images [src: KubeVirt pkg/storage/export/export/export.go isKubevirtContentType]); its
 * `export` task is filed under `<namespace>/<name>` (the VM, or the CT whose claim it is).
 */
export async function openExport(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  what: ExportOptions & { source: ExportSource; volume: string; labels: Record<string, string> },
): Promise<ExportSession> {
  const { volume, source, labels, ...options } = what;
  const object = `${name}-export-${Date.now().toString(36)}`.slice(0, 63).replace(/-+$/, '');
  try {
    await deps.cluster.create('VirtualMachineExport', {
      apiVersion: 'export.kubevirt.io/v1beta1',
      kind: 'VirtualMachineExport',
      metadata: { name: object, namespace, labels },
      spec: { source, ttlDuration: '2h' },
    });
  } catch (err) {
    if (err instanceof CorralError && err.code === 'UNPROCESSABLE' && /feature gate/i.test(err.message))
      throw new CorralError('CONFLICT', VMEXPORT_GATE_HINT, { cause: err });
    if (err instanceof CorralError && err.code === 'NOT_FOUND')
      throw new CorralError('CONFLICT', "KubeVirt's export API (export.kubevirt.io) is not installed", { cause: err });
    throw err;
  }
  const task = deps.journal.start('export', `${namespace}/${name}`, caller.identity.login);
  task.log(`VirtualMachineExport ${object} created for disk ${volume}`);
  let closed = false;
  const close = async (error?: unknown) => {
    if (closed) return;
    closed = true;
    if (error === undefined) task.done('export complete');
    // The task reading the export (a move) was cancelled, not this one (it takes no cancel): it stopped with it.
    else if (error instanceof TaskCancelled)
      task.fail(new Error(`stopped: the task using this export was cancelled by ${error.by}`));
    else task.fail(error);
    await deps.cluster.remove('VirtualMachineExport', namespace, object).catch((err: unknown) => {
      task.log(`could not delete VirtualMachineExport ${object}: ${String(err)}`);
    });
  };
  try {
    const deadline = Date.now() + (options.readyTimeoutMs ?? Math.min(deps.config.waitTimeoutMs, 5 * 60_000));
    for (;;) {
      if (options.signal?.aborted)
        throw new CorralError('CONFLICT', 'the client went away before the export was ready');
      const exp = await deps.cluster.fetch('VirtualMachineExport', namespace, object);
      if (!exp) throw new CorralError('BAD_GATEWAY', `VirtualMachineExport ${object} disappeared`);
      const status = asDict(exp.status);
      const phase = asString(status.phase);
      if (phase === 'Skipped') {
        const why = asArray(status.conditions)
          .map(asDict)
          .find((c) => c.status === 'False' && asString(c.message));
        const message = asString(why?.message);
        throw new CorralError(
          'CONFLICT',
          /feature gate/i.test(message)
            ? VMEXPORT_GATE_HINT
            : `the export was skipped: ${message || 'no reason given'}`,
        );
      }
      if (phase === 'Ready') {
        const raw = pickLink(exp, volume, 'raw');
        const gzip = pickLink(exp, volume, 'gzip');
        const archived = raw ? undefined : pickLink(exp, volume, 'tar.gz');
        const link = raw ?? (options.archive ? archived : undefined);
        if (!link)
          throw new CorralError(
            'BAD_GATEWAY',
            archived
              ? `VirtualMachineExport ${object} offers ${volume} only as files (dir, tar.gz): the claim holds a plain filesystem, not a disk image`
              : `VirtualMachineExport ${object} has no raw link for ${volume}`,
          );
        const secretName = asString(status.tokenSecretRef) || asString(asDict(exp.spec).tokenSecretRef);
        const secret = secretName ? await deps.cluster.fetch('Secret', namespace, secretName) : undefined;
        const data = asString(asDict(secret?.data).token);
        const token = data ? Buffer.from(data, 'base64').toString('utf8') : asString(asDict(secret?.stringData).token);
        if (!token)
          throw new CorralError('BAD_GATEWAY', `the token Secret of VirtualMachineExport ${object} is missing`);
        task.log(`export ready; streaming ${volume}${raw ? '' : ' (its files, as tar.gz)'}`);
        task.progress(10);
        return {
          object,
          volume,
          format: raw ? 'raw' : 'tar.gz',
          url: link.url,
          ...(raw && gzip ? { gzipUrl: gzip.url } : {}),
          token,
          ...(link.ca ? { ca: link.ca } : {}),
          task,
          close,
        };
      }
      if (Date.now() > deadline)
        throw new CorralError(
          'TIMEOUT',
          `VirtualMachineExport ${object} was not ready in time (phase ${phase || 'none'})`,
        );
      await sleep(Math.min(deps.config.pollMs, 250));
    }
  } catch (err) {
    await close(err);
    throw err;
  }
}
