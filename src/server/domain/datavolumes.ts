/**
 * The image library's imported images: CDI DataVolumes that belong to no VM. A POST creates one importing from an
 * http(s) URL (or a registry) and follows it as a task whose progress is the DataVolume's `status.progress`; rows
 * read the watch cache, so the list and its live progress cost no cluster call.
 *
 * CDI never gives up on an importer that cannot reach its URL: the DataVolume stays `ImportInProgress` with the
 * Running condition's reason `Error` and the importer pod restarting. Corral does not invent a phase for that; the
 * row carries the condition's message as `error`, and the import task ends in error after FAILED_ATTEMPTS attempts
 * with that message (the DataVolume is left for the user to inspect or delete).
 */
import type { DataVolumeCreateInput, DataVolumeRow } from '../schemas/images';
import { CorralError } from '../errors';
import type { ChangeEvent, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { LABEL_MANAGED_BY, LABEL_VM } from './labels';
import type { TaskHandle } from './tasks';
import { runAsTask } from './tasks';
import { asDict } from './vm-facts';

/** Label on DataVolumes the image library created: `disk` or `iso` (how the wizard offers them). */
export const LABEL_IMAGE = 'corral.dev/image';
/** Importer attempts that failed before the import task reports the failure. */
export const FAILED_ATTEMPTS = 3;

/** A DataVolume belongs to a VM when labelled `corral.dev/vm` or owned by a VirtualMachine. */
function belongsToVm(dv: KObject): string | undefined {
  const label = dv.metadata.labels?.[LABEL_VM];
  if (label) return label;
  return dv.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachine')?.name;
}

function sourceOf(dv: KObject): string {
  const source = asDict(asDict(dv.spec).source);
  const http = asDict(source.http);
  if (typeof http.url === 'string') return http.url;
  const registry = asDict(source.registry);
  if (typeof registry.url === 'string') return registry.url;
  const pvc = asDict(source.pvc);
  if (typeof pvc.name === 'string') return `pvc:${String(pvc.namespace ?? '')}/${pvc.name}`;
  return Object.keys(source)[0] ?? '';
}

function sizeOf(dv: KObject): string {
  const spec = asDict(dv.spec);
  const requests = asDict(asDict(asDict(spec.storage ?? spec.pvc).resources).requests);
  return typeof requests.storage === 'string' ? requests.storage : '';
}

/** `"45.12%"` → 45.12; `"N/A"` or absent → null. */
export function parseProgress(raw: unknown): number | null {
  if (typeof raw !== 'string') return null;
  const m = /^(\d+(?:\.\d+)?)%$/.exec(raw.trim());
  return m ? Math.min(100, Number(m[1])) : null;
}

function runningError(dv: KObject): string {
  const status = asDict(dv.status);
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(asDict) : [];
  const running = conditions.find((c) => c.type === 'Running');
  if (status.phase === 'Failed') {
    const bad = conditions.find((c) => c.status === 'False' && typeof c.message === 'string' && c.message !== '');
    return String(bad?.message ?? running?.message ?? 'import failed');
  }
  if (running?.status === 'False' && running.reason === 'Error') return String(running.message ?? 'importer error');
  // An upload whose bytes did not all arrive (datavolume-upload.ts notes why on the DataVolume).
  if (status.phase !== 'Succeeded') return dv.metadata.annotations?.['corral.dev/upload-error'] ?? '';
  return '';
}

export function dataVolumeRow(dv: KObject): DataVolumeRow {
  const status = asDict(dv.status);
  const source = sourceOf(dv);
  const labelled = dv.metadata.labels?.[LABEL_IMAGE];
  return {
    name: dv.metadata.name ?? '',
    namespace: dv.metadata.namespace ?? '',
    size: sizeOf(dv),
    phase: typeof status.phase === 'string' && status.phase ? status.phase : 'Pending',
    progress: status.phase === 'Succeeded' ? 100 : parseProgress(status.progress),
    source,
    contentType: labelled === 'iso' || (!labelled && /\.iso$/i.test(source)) ? 'iso' : 'disk',
    error: runningError(dv),
    restarts: Number(status.restartCount ?? 0) || 0,
    createdAt: dv.metadata.creationTimestamp ?? '',
  };
}

/** Imported images: every DataVolume that belongs to no VM, by namespace then name. */
export function listDataVolumes(deps: DomainDeps, namespace?: string): DataVolumeRow[] {
  return deps.cluster.cache
    .list('DataVolume', namespace)
    .filter((dv) => !belongsToVm(dv) && !dv.metadata.deletionTimestamp)
    .map(dataVolumeRow)
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

export function buildImportDataVolume(input: DataVolumeCreateInput, namespace: string): KObject {
  const contentType = input.contentType ?? (input.url && /\.iso$/i.test(new URL(input.url).pathname) ? 'iso' : 'disk');
  const source = input.url ? { http: { url: input.url } } : { registry: { url: `docker://${input.registry}` } };
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name: input.name,
      namespace,
      labels: { [LABEL_IMAGE]: contentType, [LABEL_MANAGED_BY]: 'corral' },
      // Import now, not when a first VM mounts it (WaitForFirstConsumer classes would otherwise never start).
      annotations: { 'cdi.kubevirt.io/storage.bind.immediate.requested': 'true' },
    },
    spec: { source, storage: { resources: { requests: { storage: input.size } } } },
  };
}

export async function importDataVolume(
  deps: DomainDeps,
  caller: Caller,
  input: DataVolumeCreateInput,
): Promise<{ name: string; namespace: string; task: string }> {
  const namespace = input.namespace ?? deps.config.defaultNamespace;
  const target = `${namespace}/${input.name}`;
  if (deps.cluster.cache.get('DataVolume', namespace, input.name)) {
    throw new CorralError('CONFLICT', `DataVolume ${target} already exists; pick another name or delete it first`);
  }
  if (!(await deps.cluster.fetch('Namespace', undefined, namespace))) {
    throw new CorralError('BAD_REQUEST', `namespace: no namespace '${namespace}'`);
  }
  const task = deps.journal.start('import', target, caller.identity.login);
  try {
    const created = await deps.cluster.create('DataVolume', buildImportDataVolume(input, namespace));
    task.log(`importing ${sourceOf(created)} into DataVolume ${target} (${input.size})`);
  } catch (err) {
    task.fail(err);
    throw err;
  }
  void followImport(deps, namespace, input.name, task);
  return { name: input.name, namespace, task: task.id };
}

/** Follows one DataVolume through the watch cache until it succeeds, fails, keeps failing, vanishes or times out. */
function followImport(deps: DomainDeps, namespace: string, name: string, task: TaskHandle): Promise<void> {
  return new Promise<void>((resolve) => {
    let lastPhase = '';
    let lastRestarts = 0;
    const finish = (ok: boolean, line: string) => {
      unsubscribe();
      clearTimeout(timer);
      if (ok) task.done(line);
      else task.fail(new CorralError('BAD_GATEWAY', line));
      resolve();
    };
    const look = (dv: KObject | undefined) => {
      if (task.finished) return;
      if (!dv) return finish(false, `DataVolume ${namespace}/${name} was deleted before the import finished`);
      const row = dataVolumeRow(dv);
      if (row.phase !== lastPhase) task.log(`phase ${(lastPhase = row.phase)}`);
      if (row.progress !== null) task.progress(row.progress);
      if (row.restarts > lastRestarts) {
        lastRestarts = row.restarts;
        task.log(`importer attempt ${row.restarts} failed: ${row.error || 'see the importer pod log'}`);
      }
      if (row.phase === 'Succeeded') return finish(true, `imported ${row.source} into ${namespace}/${name}`);
      if (row.phase === 'Failed') return finish(false, `import of ${namespace}/${name} failed: ${row.error}`);
      if (row.error && row.restarts >= FAILED_ATTEMPTS) {
        finish(
          false,
          `import of ${namespace}/${name} is failing (${row.restarts} attempts): ${row.error} — CDI keeps retrying; delete the image to stop it`,
        );
      }
    };
    const unsubscribe = deps.cluster.onChange((e: ChangeEvent) => {
      if (e.kind !== 'DataVolume' || e.object.metadata.namespace !== namespace || e.object.metadata.name !== name)
        return;
      look(e.type === 'DELETED' ? undefined : e.object);
    });
    const timer = setTimeout(
      () => finish(false, `import of ${namespace}/${name} did not finish in ${deps.config.waitTimeoutMs / 1000}s`),
      deps.config.waitTimeoutMs,
    );
    look(deps.cluster.cache.get('DataVolume', namespace, name) ?? { metadata: { name, namespace } });
  });
}

export async function deleteDataVolume(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
): Promise<{ status: 'deleted'; task: string }> {
  const dv = deps.cluster.cache.get('DataVolume', namespace, name);
  if (!dv) throw new CorralError('NOT_FOUND', `DataVolume ${namespace}/${name} not found`);
  const vm = belongsToVm(dv);
  if (vm) {
    throw new CorralError(
      'CONFLICT',
      `DataVolume ${namespace}/${name} is a disk of VM ${vm}, not an imported image; delete or edit the VM instead`,
    );
  }
  return runAsTask(deps.journal, 'image-delete', `${namespace}/${name}`, caller.identity.login, async (task) => {
    const removed = await deps.cluster.remove('DataVolume', namespace, name);
    if (!removed) throw new CorralError('NOT_FOUND', `DataVolume ${namespace}/${name} not found (deleted meanwhile)`);
    task.done(`deleted DataVolume ${namespace}/${name} (CDI removes its PVC with it)`);
    return { status: 'deleted' as const, task: task.id };
  });
}
