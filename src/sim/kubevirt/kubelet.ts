/**
 * kube-scheduler + kubelet for every pod in the cluster (virt-launcher, hot-plug attachment pods, Corral's
 * container pods): bind a pending pod to a node (~0.2 s), pull the image (1.5 s for cached launcher images,
 * 1–10 s otherwise), then Running with a pod IP from the node's CIDR and ready containerStatuses. A pod nothing
 * fits stays Pending with `PodScheduled=False reason Unschedulable` and is retried when nodes or pods change.
 * Graceful deletion: a pod marked for deletion stops its containers (1–3 s) and goes.
 */
import { StageTimers } from './stage-timers.js';
import type { SimContext } from '../module.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { recordEvent } from '../events.js';
import { K, PHASE_DRIVEN_BY_ANNOTATION } from './keys.js';
import type { Json } from './objects.js';
import { digArray, digString, hash32, setCondition, status } from './objects.js';
import type { PodIndex } from './pod-index.js';
import { schedule } from './scheduler.js';
import { WorkQueue } from './work-queue.js';

const BIND_DELAY_MS = 200;
const LAUNCHER_PULL_MS = 1500;
const UNSCHEDULABLE_RETRY_MS = 15_000;

/**
 * The sim has no network, so a fixed rule (the same one CDI's importers follow, docs/sim-storage.md) decides what
 * a pull does: a registry on a reserved name (`*.invalid`, `*.test`, `*.example`, `*.localhost`, localhost) does
 * not resolve; a repository or tag that is `404`/`notfound`/`not-found`/`missing` or contains `does-not-exist`
 * is not found; everything else pulls.
 */
const RESERVED_SUFFIXES = ['.invalid', '.test', '.example', '.localhost'];
const MISSING = /^(404|notfound|not-found|missing)$|does-not-exist/i;

export function registryOf(image: string): string {
  const first = image.split('/')[0] ?? '';
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')
    ? first
    : 'docker.io';
}

/** Why pulling `image` fails, in containerd's words, or undefined when it pulls. */
export function pullFailure(image: string): string | undefined {
  const host = registryOf(image).replace(/:\d+$/, '').toLowerCase();
  if (host === 'localhost' || RESERVED_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return `failed to pull and unpack image "${image}": failed to resolve reference "${image}": failed to do request: Head "https://${host}/v2/": dial tcp: lookup ${host}: no such host`;
  }
  const path = image.includes('/') && registryOf(image) !== 'docker.io' ? image.slice(image.indexOf('/') + 1) : image;
  const segments = path.split(/[/:@]/);
  if (segments.some((segment) => MISSING.test(segment))) {
    return `failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found`;
  }
  return undefined;
}

function isLauncherLike(pod: KObject): boolean {
  const role = pod.metadata.labels?.['kubevirt.io'];
  return role === 'virt-launcher' || role === 'hotplug-disk';
}

type Key = { namespace: string; name: string };

export class Kubelet {
  private readonly queue: WorkQueue<Key>;
  /** Pod uid + stage → a timer is already running for it. */
  private readonly timers: StageTimers;
  private readonly unschedulable = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private stopRetry: (() => void) | undefined;

  constructor(
    private readonly ctx: SimContext,
    private readonly index: PodIndex,
  ) {
    this.timers = new StageTimers(ctx.clock);
    this.queue = new WorkQueue('kubelet', (key) => this.reconcile(key));
  }

  start(): void {
    this.unsubscribe = this.ctx.store.subscribe((event) => this.onEvent(event));
    for (const pod of this.ctx.store.list(K.pods)) this.enqueue(pod);
    this.stopRetry = this.ctx.clock.every(UNSCHEDULABLE_RETRY_MS, () => this.retryUnschedulable());
  }

  stop(): void {
    this.unsubscribe?.();
    this.stopRetry?.();
    this.queue.stop();
  }

  private enqueue(pod: KObject): void {
    const namespace = pod.metadata.namespace ?? 'default';
    this.queue.add(`${namespace}/${pod.metadata.name}`, { namespace, name: pod.metadata.name });
  }

  private onEvent(event: StoreEvent): void {
    if (event.key === K.pods) {
      if (event.type !== 'DELETED') this.enqueue(event.object);
      // A pod going away frees capacity (or a node appearing adds some): pending pods may fit now.
      else this.retryUnschedulable();
    } else if (event.key === K.nodes) {
      this.retryUnschedulable();
    }
  }

  private retryUnschedulable(): void {
    for (const id of this.unschedulable) {
      const [namespace, name] = id.split('/') as [string, string];
      this.queue.add(id, { namespace, name });
    }
  }

  private reconcile({ namespace, name }: Key): void {
    const pod = this.ctx.store.get(K.pods, namespace, name);
    const id = `${namespace}/${name}`;
    if (!pod) {
      this.unschedulable.delete(id);
      return;
    }
    if (pod.metadata.annotations?.[PHASE_DRIVEN_BY_ANNOTATION]) return;
    if (pod.metadata.deletionTimestamp) {
      this.unschedulable.delete(id);
      const grace = pod.metadata.deletionGracePeriodSeconds ?? 30;
      const stopMs = grace === 0 ? 0 : Math.min(grace * 1000, 1000 + (hash32(pod.metadata.uid) % 2000));
      this.timers.once(pod, 'terminate', stopMs, () => this.finishDeletion(namespace, name, pod.metadata.uid));
      return;
    }
    const phase = digString(pod, 'status', 'phase');
    if (phase === 'Succeeded' || phase === 'Failed') return;
    const nodeName = digString(pod, 'spec', 'nodeName');
    if (!nodeName) {
      this.timers.once(pod, 'bind', this.unschedulable.has(id) ? 0 : BIND_DELAY_MS, () => this.bind(namespace, name));
      return;
    }
    this.unschedulable.delete(id);
    if (phase === 'Running') return;
    // A failed pull stays failed (ErrImagePull, then ImagePullBackOff) until the pod is replaced.
    const pullFailed = digArray(pod, 'status', 'containerStatuses').some((c) => {
      const reason = digString(c, 'state', 'waiting', 'reason');
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff';
    });
    if (pullFailed) return;
    const images = digArray(pod, 'spec', 'containers').map((c) => String(c.image ?? ''));
    const pullMs = isLauncherLike(pod) ? LAUNCHER_PULL_MS : 1000 + (hash32(images.join(',')) % 9000);
    this.markContainerCreating(pod);
    this.timers.once(pod, 'run', pullMs, () => this.run(namespace, name));
  }

  private bind(namespace: string, name: string): void {
    const store = this.ctx.store;
    const pod = store.get(K.pods, namespace, name);
    if (!pod || pod.metadata.deletionTimestamp || digString(pod, 'spec', 'nodeName')) return;
    const result = schedule(pod, store.list(K.nodes), (node) => this.index.nodeUsage(node));
    const id = `${namespace}/${name}`;
    if ('message' in result) {
      const wasKnown = this.unschedulable.has(id);
      this.unschedulable.add(id);
      store.mutate(K.pods, namespace, name, (p) => {
        const before = JSON.stringify(p.status ?? {});
        status(p).phase = 'Pending';
        setCondition(p, {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: result.message,
          probe: true,
        });
        if (JSON.stringify(p.status) === before) return false;
      });
      if (!wasKnown)
        recordEvent(store, pod, 'FailedScheduling', result.message, {
          type: 'Warning',
          component: 'default-scheduler',
        });
      return;
    }
    this.unschedulable.delete(id);
    const nodeName = result.node.metadata.name;
    const bound = store.mutate(K.pods, namespace, name, (p) => {
      (p.spec as Json).nodeName = nodeName;
      status(p).phase = 'Pending';
      setCondition(p, { type: 'PodScheduled', status: 'True' });
    });
    if (bound) {
      recordEvent(store, bound, 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`, {
        component: 'default-scheduler',
      });
    }
  }

  private markContainerCreating(pod: KObject): void {
    if (digArray(pod, 'status', 'containerStatuses').length) return;
    this.ctx.store.mutate(K.pods, pod.metadata.namespace, pod.metadata.name, (p) => {
      const st = status(p);
      st.phase = 'Pending';
      st.hostIP = this.nodeIp(digString(p, 'spec', 'nodeName'));
      st.startTime ??= nowTimestamp();
      st.containerStatuses = digArray(p, 'spec', 'containers').map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: { waiting: { reason: 'ContainerCreating' } },
      }));
    });
  }

  private nodeIp(nodeName: string | undefined): string | undefined {
    if (!nodeName) return undefined;
    const node = this.ctx.store.get(K.nodes, undefined, nodeName);
    return digArray(node, 'status', 'addresses').find((a) => a.type === 'InternalIP')?.address as string | undefined;
  }

  private run(namespace: string, name: string): void {
    const store = this.ctx.store;
    const pod = store.get(K.pods, namespace, name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const nodeName = digString(pod, 'spec', 'nodeName');
    const node = nodeName ? store.get(K.nodes, undefined, nodeName) : undefined;
    if (!node) return;
    const containers = digArray(pod, 'spec', 'containers');
    for (const c of containers) {
      const failure = pullFailure(String(c.image ?? ''));
      if (failure) {
        this.failPull(pod, String(c.image), failure);
        return;
      }
    }
    const ip = pod.spec && (pod.spec as Json).hostNetwork ? this.nodeIp(nodeName) : this.index.allocateIp(node);
    const running = store.mutate(K.pods, namespace, name, (p) => markPodRunning(p, node, ip));
    if (running) {
      for (const c of containers)
        recordEvent(store, running, 'Started', `Started container ${String(c.name)}`, { component: 'kubelet' });
    }
  }

  private failPull(pod: KObject, image: string, failure: string): void {
    const store = this.ctx.store;
    const message = `Failed to pull image "${image}": ${failure}`;
    const setWaiting = (reason: string, text: string) =>
      store.mutate(K.pods, pod.metadata.namespace, pod.metadata.name, (p) => {
        const st = status(p);
        st.phase = 'Pending';
        st.containerStatuses = digArray(p, 'spec', 'containers').map((c) => ({
          name: c.name,
          image: c.image,
          imageID: '',
          ready: false,
          started: false,
          restartCount: 0,
          state: { waiting: { reason, message: text } },
        }));
        setCondition(p, {
          type: 'Ready',
          status: 'False',
          reason: 'ContainersNotReady',
          message: `containers with unready status: [${digArray(p, 'spec', 'containers')
            .map((c) => String(c.name))
            .join(' ')}]`,
        });
      });
    setWaiting('ErrImagePull', message);
    recordEvent(store, pod, 'Failed', message, { type: 'Warning', component: 'kubelet' });
    this.ctx.clock.after(2000, () => {
      if (!store.get(K.pods, pod.metadata.namespace, pod.metadata.name)) return;
      setWaiting('ImagePullBackOff', `Back-off pulling image "${image}"`);
      recordEvent(store, pod, 'BackOff', `Back-off pulling image "${image}"`, { type: 'Normal', component: 'kubelet' });
    });
  }

  private finishDeletion(namespace: string, name: string, uid: string): void {
    const pod = this.ctx.store.get(K.pods, namespace, name);
    if (!pod || pod.metadata.uid !== uid) return;
    if (pod.metadata.finalizers?.length) return; // someone else still holds it
    this.ctx.store.delete(K.pods, namespace, name);
  }
}

/** Status of a pod whose containers all started on `node` with address `ip` (kubelet's view). */
export function markPodRunning(pod: KObject, node: KObject, ip: string | undefined): void {
  const now = nowTimestamp();
  const hostIp = digArray(node, 'status', 'addresses').find((a) => a.type === 'InternalIP')?.address as
    string | undefined;
  const st = status(pod);
  st.phase = 'Running';
  st.hostIP = hostIp;
  st.hostIPs = hostIp ? [{ ip: hostIp }] : [];
  st.podIP = ip;
  st.podIPs = ip ? [{ ip }] : [];
  st.startTime ??= now;
  st.qosClass = 'Burstable';
  for (const type of ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled'])
    setCondition(pod, { type, status: 'True' });
  st.containerStatuses = digArray(pod, 'spec', 'containers').map((c) => ({
    name: c.name,
    image: c.image,
    imageID: `${String(c.image).split(':')[0]}@sha256:${hash32(String(c.image)).toString(16).padStart(8, '0').repeat(8)}`,
    containerID: `containerd://${hash32(
      `${pod.metadata.namespace}/${pod.metadata.name}/${String(c.name)}/${st.startTime as string}`,
    )
      .toString(16)
      .padStart(8, '0')
      .repeat(8)}`,
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: now } },
  }));
}
