/**
 * What "no change of cluster state" means for the fuzz suites: the resourceVersion of every object Corral can
 * create or change (VMs, VMIs, DataVolumes, PVCs, Secrets, ConfigMaps, snapshots, clones, Jobs, …), read from the
 * embedded cluster's in-process store. Kinds that change on their own (Events, Nodes, Leases) are left out, and so
 * is the one ConfigMap Corral rewrites on a timer.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { METRICS_SHARE_NAME } from '@/server/domain/metrics-share';
import type { ObjectStore } from '@/sim/index';

/** Kinds whose objects the cluster itself keeps rewriting, or that no Corral request can touch. */
const IGNORED = new Set([
  '/events',
  'events.k8s.io/events',
  '/nodes',
  'coordination.k8s.io/leases',
  'apiextensions.k8s.io/customresourcedefinitions',
  'metrics.k8s.io/nodes',
  'metrics.k8s.io/pods',
]);

/**
 * Single objects Corral itself rewrites on a timer, whatever the requests: the leader's metrics round handed to the
 * other replicas (rewritten every sampling interval).
 */
const IGNORED_CONFIGMAPS = new Set([METRICS_SHARE_NAME]);

export type ClusterSnapshot = Map<string, string>;

export function snapshot(store: ObjectStore): ClusterSnapshot {
  const out: ClusterSnapshot = new Map();
  for (const t of store.allTypes()) {
    const key = `${t.group}/${t.plural}`;
    if (IGNORED.has(key)) continue;
    for (const o of store.list(key)) {
      if (key === '/configmaps' && IGNORED_CONFIGMAPS.has(o.metadata.name)) continue;
      out.set(
        `${t.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`,
        o.metadata.resourceVersion,
      );
    }
  }
  return out;
}

/** `+ VirtualMachine tailvm/x`, `- …`, `~ … rv 12→15`; empty when nothing changed. */
export function diff(before: ClusterSnapshot, after: ClusterSnapshot): string[] {
  const changes: string[] = [];
  for (const [k, rv] of after) {
    const was = before.get(k);
    if (was === undefined) changes.push(`+ ${k}`);
    else if (was !== rv) changes.push(`~ ${k} rv ${was}→${rv}`);
  }
  for (const k of before.keys()) if (!after.has(k)) changes.push(`- ${k}`);
  return changes;
}

/** Names of VirtualMachines a diff says were added: what a cleanup deletes after an input wrongly accepted. */
export function addedVms(changes: string[]): { namespace: string; name: string }[] {
  return changes
    .map((c) => /^\+ VirtualMachine ([^/]+)\/(.+)$/.exec(c))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ namespace: m[1] as string, name: m[2] as string }));
}

let gcFn: (() => void) | undefined;

/**
 * A full GC. `global.gc` when Node runs with --expose-gc; otherwise the flag is switched on at run time and the
 * function taken from a fresh context (a documented V8 trick). Returns false when neither works.
 */
export function forceGc(): boolean {
  if (!gcFn) {
    const g = (globalThis as { gc?: () => void }).gc;
    if (typeof g === 'function') gcFn = g;
    else {
      try {
        setFlagsFromString('--expose-gc');
        gcFn = runInNewContext('gc') as () => void;
      } catch {
        return false;
      }
    }
  }
  gcFn();
  return true;
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  /** Off-heap memory V8 knows of (Buffers, typed arrays); `arrayBuffers` is the part held by ArrayBuffers. */
  external: number;
  arrayBuffers: number;
  gc: boolean;
}

/** RSS and heapUsed of this process (Corral, the embedded cluster and the fuzzer) after a few GCs and a pause. */
export async function settledMemory(): Promise<MemorySample> {
  let gc = false;
  for (let i = 0; i < 3; i++) {
    gc = forceGc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    gc,
  };
}
