/**
 * CT lifecycle (api.md "Containers (CT)"): create, start, stop, restart, scale and delete, each a task. Refusals
 * (a CT that is not there, a start of a running one) are thrown before any task exists; the task itself ends when
 * the pod has reached the state asked for (Running, or gone), or fails with the reason it did not.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { findCt, podPhase, podTrouble, requireCt } from './ct-rows';
import {
  ANNOTATION_CT_DESCRIPTION,
  ANNOTATION_CT_SPEC,
  claimManifest,
  ctTags,
  dataClaimName,
  LABEL_CT_NAME,
  podManifest,
  type ClaimExtras,
  type CtSpec,
} from './ct-spec';
import { LABEL_TAG_PREFIX, LABEL_VMID } from './labels';
import type { TaskHandle } from './tasks';
import { waitFor } from './vm-hw-wait';

export interface CtCreateRequest {
  name: string;
  namespace?: string;
  image: string;
  cpu?: number;
  mem?: string;
  disk?: string;
  storageClass?: string;
  privileged?: boolean;
}

/** Waiting reasons after which a pod will not start without someone changing something. */
const HOPELESS =
  /^(ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull|CreateContainerConfigError|CrashLoopBackOff)\b/;

type PodGoal = (pod: KObject | undefined) => boolean | Error;

const isRunning: PodGoal = (pod) => {
  if (!pod || pod.metadata.deletionTimestamp) return false;
  const phase = podPhase(pod);
  if (phase === 'Running') return true;
  if (phase === 'Failed' || phase === 'Succeeded') return new Error(`the pod ended (${phase})`);
  const trouble = podTrouble(pod);
  return HOPELESS.test(trouble) ? new Error(trouble) : false;
};
const isGone: PodGoal = (pod) => !pod;

/** Resolves once the cached pod satisfies `goal`; rejects with the goal's error or after `timeoutMs`. */
function waitForPod(deps: DomainDeps, namespace: string, name: string, goal: PodGoal, what: string): Promise<void> {
  const timeoutMs = deps.config.waitTimeoutMs;
  return new Promise<void>((resolve, reject) => {
    const check = (): boolean => {
      const outcome = goal(deps.cluster.cache.get('Pod', namespace, name));
      if (outcome === false) return false;
      finish();
      if (outcome instanceof Error) reject(outcome);
      else resolve();
      return true;
    };
    const unsubscribe = deps.cluster.onChange((e) => {
      if (e.kind === 'Pod' && e.object.metadata.namespace === namespace && e.object.metadata.name === name) check();
    });
    const timer = setTimeout(() => {
      finish();
      const pod = deps.cluster.cache.get('Pod', namespace, name);
      const trouble = podTrouble(pod);
      reject(
        new Error(
          `CT ${namespace}/${name} was not ${what} after ${Math.round(timeoutMs / 1000)} s (${podPhase(pod)}${trouble ? `: ${trouble}` : ''})`,
        ),
      );
    }, timeoutMs);
    function finish() {
      unsubscribe();
      clearTimeout(timer);
    }
    check();
  });
}

/** Runs `body` in the background as a task and returns the task id at once; the task records how it ended. */
function background(
  deps: DomainDeps,
  caller: Caller,
  action: string,
  spec: { namespace: string; name: string },
  body: (task: TaskHandle) => Promise<string>,
): string {
  const task = deps.journal.start(action, `${spec.namespace}/${spec.name}`, caller.identity.login);
  body(task).then(
    (line) => {
      if (!task.finished) task.done(line);
    },
    (err: unknown) => {
      if (!task.finished) task.fail(err);
    },
  );
  return task.id;
}

async function bootPod(deps: DomainDeps, task: TaskHandle, spec: CtSpec): Promise<string> {
  await deps.cluster.create('Pod', podManifest(spec));
  task.log(`Pod ${spec.namespace}/${spec.name} created (image ${spec.image}${spec.privileged ? ', privileged' : ''})`);
  await waitForPod(deps, spec.namespace, spec.name, isRunning, 'running');
  const pod = deps.cluster.cache.get('Pod', spec.namespace, spec.name);
  return `CT is Running on ${String(pod?.spec?.nodeName ?? '?')}`;
}

async function stopPod(deps: DomainDeps, task: TaskHandle, spec: CtSpec): Promise<void> {
  if (await deps.cluster.remove('Pod', spec.namespace, spec.name))
    task.log(`Pod ${spec.namespace}/${spec.name} deleted`);
  await waitForPod(deps, spec.namespace, spec.name, isGone, 'stopped');
  task.log('pod is gone; the data volume is kept');
}

/** How a create is carried out beyond the CT itself: extra PVC metadata (a Proxmox vmid, tags), and whether it boots. */
export interface CtCreateOptions extends ClaimExtras {
  /** Boot the pod once the volume exists (default). False leaves the CT Stopped, as a Proxmox create without start=1. */
  start?: boolean;
}

export async function createCt(
  deps: DomainDeps,
  caller: Caller,
  input: CtCreateRequest,
  options: CtCreateOptions = {},
): Promise<{ name: string; namespace: string; task: string }> {
  const spec: CtSpec = {
    name: input.name,
    namespace: input.namespace ?? deps.config.defaultNamespace,
    image: input.image,
    cpu: input.cpu ?? 1,
    mem: input.mem ?? '512Mi',
    disk: input.disk ?? '8Gi',
    storageClass: input.storageClass ?? '',
    privileged: input.privileged ?? false,
  };
  const ref = `${spec.namespace}/${spec.name}`;
  const existing = findCt(deps, spec.namespace, spec.name);
  if (existing) throw new CorralError('CONFLICT', `CT ${ref} already exists (${podPhase(existing.pod)})`);
  if (deps.cluster.cache.get('PersistentVolumeClaim', spec.namespace, dataClaimName(spec.name)))
    throw new CorralError(
      'CONFLICT',
      `a PersistentVolumeClaim ${spec.namespace}/${dataClaimName(spec.name)} already exists`,
    );
  if (await deps.cluster.fetch('Pod', spec.namespace, spec.name))
    throw new CorralError('CONFLICT', `a pod ${ref} already exists`);
  if (spec.storageClass && !(await deps.cluster.fetch('StorageClass', undefined, spec.storageClass)))
    throw new CorralError('BAD_REQUEST', `storageClass: StorageClass "${spec.storageClass}" does not exist`);
  const task = deps.journal.start('ct-create', ref, caller.identity.login);
  try {
    await deps.cluster.create('PersistentVolumeClaim', claimManifest(spec, options));
    task.log(`PersistentVolumeClaim ${spec.namespace}/${dataClaimName(spec.name)} created (${spec.disk})`);
  } catch (err) {
    task.fail(err);
    throw err;
  }
  if (options.start === false) {
    task.done('CT created (Stopped)');
    return { name: spec.name, namespace: spec.namespace, task: task.id };
  }
  bootPod(deps, task, spec).then(
    (line) => task.done(line),
    (err: unknown) => task.fail(err),
  );
  return { name: spec.name, namespace: spec.namespace, task: task.id };
}

export type CtAction = 'start' | 'stop' | 'restart';

export function ctAction(deps: DomainDeps, caller: Caller, namespace: string, name: string, action: CtAction): string {
  const { spec, pod } = requireCt(deps, namespace, name);
  const phase = podPhase(pod);
  if (action === 'start' && pod) throw new CorralError('CONFLICT', `CT ${namespace}/${name} is ${phase}`);
  if (action !== 'start' && (!pod || pod.metadata.deletionTimestamp))
    throw new CorralError('CONFLICT', `CT ${namespace}/${name} is ${phase}`);
  return background(deps, caller, `ct-${action}`, spec, async (task) => {
    if (action !== 'start') await stopPod(deps, task, spec);
    return action === 'stop' ? 'CT is Stopped' : bootPod(deps, task, spec);
  });
}

export type ScaleMode = 'restart' | 'offline' | 'unchanged';

export function scaleCt(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  change: { cpu?: number; mem?: string },
): { task: string; mode: ScaleMode } {
  if (change.cpu === undefined && change.mem === undefined) throw new CorralError('BAD_REQUEST', 'give cpu and/or mem');
  const { spec, pod } = requireCt(deps, namespace, name);
  if (pod?.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `CT ${namespace}/${name} is Stopping`);
  const next: CtSpec = { ...spec, cpu: change.cpu ?? spec.cpu, mem: change.mem ?? spec.mem };
  const mode: ScaleMode = next.cpu === spec.cpu && next.mem === spec.mem ? 'unchanged' : pod ? 'restart' : 'offline';
  const task = background(deps, caller, 'ct-scale', spec, async (t) => {
    if (mode === 'unchanged') return `CT already has ${spec.cpu} CPU and ${spec.mem}`;
    await deps.cluster.patch('PersistentVolumeClaim', namespace, dataClaimName(name), {
      metadata: { annotations: { [ANNOTATION_CT_SPEC]: JSON.stringify(next) } },
    });
    t.log(`spec recorded: ${next.cpu} CPU, ${next.mem}`);
    if (mode === 'offline') return 'applies at the next start';
    // A pod's resources are fixed at creation: a running CT gets a new pod with the new size.
    await stopPod(deps, t, spec);
    return bootPod(deps, t, next);
  });
  return { task, mode };
}

export async function deleteCt(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
): Promise<{ task: string; removed: string[] }> {
  requireCt(deps, namespace, name);
  const removed: string[] = [];
  const task = deps.journal.start('ct-delete', `${namespace}/${name}`, caller.identity.login);
  const step = async (kind: 'Pod' | 'Service' | 'PersistentVolumeClaim', object: string) => {
    if (await deps.cluster.remove(kind, namespace, object)) {
      removed.push(`${kind}/${namespace}/${object}`);
      task.log(`${kind} ${namespace}/${object} deleted`);
    } else task.log(`${kind} ${namespace}/${object} was already gone`);
  };
  try {
    await step('Pod', name);
    const services = await deps.cluster.fetchList('Service', {
      namespace,
      labelSelector: `${LABEL_CT_NAME}=${name}`,
    });
    if (services.length === 0) task.log('no Service to delete');
    for (const service of services) await step('Service', service.metadata.name ?? '');
    await step('PersistentVolumeClaim', dataClaimName(name));
  } catch (err) {
    task.fail(err);
    throw err;
  }
  task.done(`CT ${namespace}/${name} deleted`);
  return { task: task.id, removed };
}

/**
 * Resolves once the cache shows the CT's recorded spec with `want`'s CPU and memory, or the task ended (whatever
 * way), so a read right after a scale sees the new size. The scale task itself goes on (a running CT gets a new pod).
 */
export function ctSpecRecorded(
  deps: DomainDeps,
  namespace: string,
  name: string,
  want: { cpu?: number; mem?: string },
  taskId: string,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const check = (): boolean => {
      const spec = findCt(deps, namespace, name)?.spec;
      const recorded =
        spec !== undefined &&
        (want.cpu === undefined || spec.cpu === want.cpu) &&
        (want.mem === undefined || spec.mem === want.mem);
      const ended = deps.journal.get(taskId)?.status !== 'running';
      if (!recorded && !ended) return false;
      stop();
      resolve();
      return true;
    };
    const unsubscribeCache = deps.cluster.onChange((e) => {
      if (e.kind === 'PersistentVolumeClaim' && e.object.metadata.name === dataClaimName(name)) check();
    });
    const unsubscribeJournal = deps.journal.subscribe((t) => {
      if (t.id === taskId) check();
    });
    function stop() {
      unsubscribeCache();
      unsubscribeJournal();
    }
    check();
  });
}

/** A CT's tags and description (Proxmox's `tags`, `description`); an absent field is left as it is. */
export interface CtNotes {
  tags?: string[];
  /** '' removes it. */
  description?: string;
}

/** Records tags (labels `corral.dev/tag.<t>`) and a description (an annotation) on the CT's PVC, as a task. */
export async function setCtNotes(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  notes: CtNotes,
): Promise<string> {
  const { pvc } = requireCt(deps, namespace, name);
  const labels: Record<string, string | null> = {};
  if (notes.tags) {
    for (const t of ctTags(pvc)) if (!notes.tags.includes(t)) labels[`${LABEL_TAG_PREFIX}${t}`] = null;
    for (const t of notes.tags) labels[`${LABEL_TAG_PREFIX}${t}`] = 'true';
  }
  const annotations: Record<string, string | null> = {};
  if (notes.description !== undefined) annotations[ANNOTATION_CT_DESCRIPTION] = notes.description || null;
  const task = deps.journal.start('ct-config', `${namespace}/${name}`, caller.identity.login);
  try {
    await deps.cluster.patch('PersistentVolumeClaim', namespace, dataClaimName(name), {
      metadata: { labels, annotations },
    });
    // Read-your-write: the answer goes out once the watch cache (which every read is served from) shows the notes.
    await waitFor(
      deps,
      namespace,
      ['PersistentVolumeClaim'],
      () => {
        const pvc = findCt(deps, namespace, name)?.pvc;
        if (!pvc) return `CT ${namespace}/${name} disappeared`;
        const tagsShown = !notes.tags || JSON.stringify(ctTags(pvc)) === JSON.stringify([...notes.tags].sort());
        const description = pvc.metadata.annotations?.[ANNOTATION_CT_DESCRIPTION] ?? '';
        return tagsShown && (notes.description === undefined || description === notes.description);
      },
      `the notes of CT ${namespace}/${name} in the cache`,
    );
  } catch (err) {
    task.fail(err);
    throw err;
  }
  task.done(
    [
      ...(notes.tags ? [`tags: ${notes.tags.join(', ') || '(none)'}`] : []),
      ...(notes.description !== undefined ? [notes.description ? 'description set' : 'description removed'] : []),
    ].join('; ') || 'nothing to change',
  );
  return task.id;
}

/** Persists a vmid the shared index chose for a CT (a collision's newcomer) as its PVC's label. */
export async function labelCtVmid(deps: DomainDeps, namespace: string, name: string, vmid: number): Promise<void> {
  await deps.cluster.patch('PersistentVolumeClaim', namespace, dataClaimName(name), {
    metadata: { labels: { [LABEL_VMID]: String(vmid) } },
  });
}
