/**
 * Pods whose lifecycle a storage controller drives (CDI importer/upload pods, exporter pods, Job pods). They carry
 * SIM_CONTROLLED_POD_ANNOTATION so a generic simulated kubelet leaves their phase alone, and their log lines in
 * POD_LOG_ANNOTATION, which is what `GET …/pods/{name}/log` serves (see podLogText).
 */
import type { KObject, NewObject, OwnerReference } from '../store/types.js';
import { S, POD_LOG_ANNOTATION, SIM_CONTROLLED_POD_ANNOTATION } from './keys.js';
import type { Runtime } from './runtime.js';
import { nowTimestamp, rec, spec, status, statusOf, str } from './util.js';

export interface ControlledPod {
  namespace: string;
  name: string;
  driver: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  owner: OwnerReference;
  /** The pod spec; `nodeName` is filled with a schedulable node when absent. */
  podSpec: Record<string, unknown>;
}

/** A Ready, schedulable node (the first in name order), or undefined on a cluster without nodes. */
export function pickNode(rt: Runtime, preferred?: string): string | undefined {
  const nodes = rt.list(S.nodes).filter((n) => {
    if (rec(n.spec).unschedulable === true) return false;
    const ready = (status(n).conditions as unknown[] | undefined)?.find((c) => rec(c).type === 'Ready');
    return !ready || rec(ready).status === 'True';
  });
  if (preferred && nodes.some((n) => n.metadata.name === preferred)) return preferred;
  return nodes[0]?.metadata.name;
}

/** Create the pod in phase Pending (scheduled), or return the existing one. */
export function ensurePod(rt: Runtime, pod: ControlledPod): KObject {
  const existing = rt.get(S.pods, pod.namespace, pod.name);
  if (existing) return existing;
  const podSpec = { ...pod.podSpec };
  const node = str(podSpec.nodeName) ?? pickNode(rt);
  if (node) podSpec.nodeName = node;
  const input: NewObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.name,
      namespace: pod.namespace,
      labels: pod.labels,
      annotations: { ...pod.annotations, [SIM_CONTROLLED_POD_ANNOTATION]: pod.driver },
      ownerReferences: [pod.owner],
    },
    spec: podSpec,
    status: {
      phase: 'Pending',
      qosClass: 'BestEffort',
      conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() }],
      containerStatuses: containers(podSpec).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        restartCount: 0,
        started: false,
        state: { waiting: { reason: 'ContainerCreating' } },
      })),
    },
  };
  return rt.store.create(S.pods, input);
}

function containers(podSpec: Record<string, unknown>): { name: string; image: string }[] {
  return (Array.isArray(podSpec.containers) ? podSpec.containers : []).map((c) => ({
    name: str(rec(c).name) ?? 'main',
    image: str(rec(c).image) ?? '',
  }));
}

function podIp(name: string): string {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `10.42.${(h >>> 8) % 250}.${(h % 250) + 2}`;
}

function podConditions(ready: boolean): unknown[] {
  const now = nowTimestamp();
  const status = ready ? 'True' : 'False';
  return [
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
    { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
    { type: 'ContainersReady', status, lastProbeTime: null, lastTransitionTime: now },
    { type: 'Ready', status, lastProbeTime: null, lastTransitionTime: now },
  ];
}

export function setPodRunning(rt: Runtime, namespace: string, name: string): void {
  rt.store.mutate(S.pods, namespace, name, (pod) => {
    const st = statusOf(pod);
    const node = str(spec(pod).nodeName);
    st.phase = 'Running';
    st.podIP = podIp(name);
    st.podIPs = [{ ip: st.podIP }];
    if (node) st.hostIP = hostIp(rt, node);
    st.startTime ??= nowTimestamp();
    st.conditions = podConditions(true);
    st.containerStatuses = (Array.isArray(st.containerStatuses) ? st.containerStatuses : []).map((c) => ({
      ...rec(c),
      ready: true,
      started: true,
      state: { running: { startedAt: nowTimestamp() } },
    }));
  });
}

function hostIp(rt: Runtime, nodeName: string): string | undefined {
  const node = rt.get(S.nodes, undefined, nodeName);
  const addresses = Array.isArray(node && status(node).addresses) ? (status(node!).addresses as unknown[]) : [];
  return str(rec(addresses.find((a) => rec(a).type === 'InternalIP')).address);
}

/** The container ended: phase Succeeded (exit 0) or Failed; `restarting` keeps the pod Running-with-backoff instead. */
export function setPodTerminated(
  rt: Runtime,
  namespace: string,
  name: string,
  result: { exitCode: number; reason: string; message?: string; restarting?: boolean },
): void {
  rt.store.mutate(S.pods, namespace, name, (pod) => {
    const st = statusOf(pod);
    const terminated = {
      exitCode: result.exitCode,
      reason: result.reason,
      message: result.message,
      startedAt: st.startTime,
      finishedAt: nowTimestamp(),
    };
    st.conditions = podConditions(false);
    st.containerStatuses = (Array.isArray(st.containerStatuses) ? st.containerStatuses : []).map((c) => {
      const prev = rec(c);
      if (!result.restarting) return { ...prev, ready: false, started: false, state: { terminated } };
      return {
        ...prev,
        ready: false,
        started: false,
        restartCount: (Number(prev.restartCount) || 0) + 1,
        lastState: { terminated },
        state: {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off restarting failed container ${str(prev.name) ?? ''}`,
          },
        },
      };
    });
    if (!result.restarting) st.phase = result.exitCode === 0 ? 'Succeeded' : 'Failed';
  });
}

export function appendPodLog(rt: Runtime, namespace: string, name: string, lines: string[]): void {
  if (!lines.length) return;
  rt.store.mutate(S.pods, namespace, name, (pod) => {
    const current = pod.metadata.annotations?.[POD_LOG_ANNOTATION] ?? '';
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [POD_LOG_ANNOTATION]: current + lines.map((l) => `${l}\n`).join(''),
    };
  });
}

/** The log text of a pod a storage controller runs; undefined for other pods. For the HTTP layer's `pods/log`. */
export function podLogText(pod: KObject): string | undefined {
  if (!pod.metadata.annotations?.[SIM_CONTROLLED_POD_ANNOTATION]) return undefined;
  return pod.metadata.annotations[POD_LOG_ANNOTATION] ?? '';
}

export function deletePod(rt: Runtime, namespace: string, name: string): void {
  if (rt.get(S.pods, namespace, name)) rt.store.delete(S.pods, namespace, name);
}

export function isContainerRunning(pod: KObject): boolean {
  const containers = Array.isArray(status(pod).containerStatuses) ? (status(pod).containerStatuses as unknown[]) : [];
  return (
    status(pod).phase === 'Running' &&
    containers.length > 0 &&
    containers.every((c) => rec(rec(c).state).running !== undefined)
  );
}

/**
 * Pending → Running is the kubelet's job (image pull 1–10 s). Where no kubelet module runs, nothing would ever
 * start the pod, so after the longest pull the kubelet takes (12 s) the controller starts it itself — never
 * earlier, so the two never overwrite each other's container states.
 */
export const KUBELET_GRACE_MS = 12_000;

export function whenNoKubelet(rt: Runtime, pod: KObject): void {
  const ns = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name;
  const uid = pod.metadata.uid;
  rt.after(`podstart:${uid}`, KUBELET_GRACE_MS, () => {
    const current = rt.get(S.pods, ns, name);
    if (!current || current.metadata.uid !== uid || current.metadata.deletionTimestamp) return;
    // A kubelet that failed the pull (ErrImagePull/ImagePullBackOff) has spoken: such a pod never starts.
    const waiting = (
      Array.isArray(status(current).containerStatuses) ? (status(current).containerStatuses as unknown[]) : []
    ).map((c) => str(rec(rec(rec(c).state).waiting).reason));
    if (status(current).phase === 'Pending' && waiting.every((reason) => reason === 'ContainerCreating'))
      setPodRunning(rt, ns, name);
  });
}
