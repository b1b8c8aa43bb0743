/**
 * metrics-server for the embedded cluster: PodMetrics (virt-launcher `compute` plus helper containers, plain
 * container pods) and NodeMetrics (its pods plus system overhead), in `n`/`Ki` units. Each pod's usage is a
 * seeded random walk around a per-pod baseline, sampled every 15 s of simulated time, so values move plausibly
 * yet the same pod at the same sample always reads the same. A pod shows up 15–60 s after it started, as the
 * real scrape latency makes it.
 */
import type { MetricsProvider, SimContext } from '../module.js';
import type { KObject } from '../store/types.js';
import { K } from './keys.js';
import { CREATED_BY_LABEL } from './launcher-pod.js';
import type { Json } from './objects.js';
import { digArray, digRecord, digString, hash32, isConditionTrue, seededRandom } from './objects.js';
import { cpuMillis, formatKi, formatNanoCores, memoryBytes } from './quantity.js';
import { LAUNCHER_OVERHEAD_BYTES, sizingOf } from './sizing.js';
import { guestMemoryBytes } from './vmi-status.js';

const SAMPLE_MS = 15_000;
const MAX_CATCH_UP_STEPS = 64;

/** A malformed limit must not take the whole metrics answer down: fall back to the defaults. */
function safe(parse: () => number): number {
  try {
    return parse();
  } catch {
    return 0;
  }
}

interface Walk {
  bucket: number;
  level: number;
}

export interface ContainerUsage {
  name: string;
  cores: number;
  bytes: number;
}

export class SimMetrics implements MetricsProvider {
  private readonly walks = new Map<string, Walk>();

  constructor(private readonly ctx: SimContext) {}

  /** Simulated milliseconds since the epoch (wall clock scaled by the speed factor). */
  private simNow(): number {
    return Date.now() * this.ctx.options.speed;
  }

  private bucket(): number {
    return Math.floor(this.simNow() / SAMPLE_MS);
  }

  private timestamp(): string {
    const realMs = (this.bucket() * SAMPLE_MS) / this.ctx.options.speed;
    return new Date(realMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /**
   * A multiplicative level around 1.0 that drifts each sample, reverts to the mean, and spikes now and then. The
   * kubelet's stats (kubelet-stats.ts) drive network and disk rates from the same walks, so I/O follows the load.
   */
  level(id: string): number {
    const now = this.bucket();
    let walk = this.walks.get(id);
    if (!walk || now - walk.bucket > MAX_CATCH_UP_STEPS)
      walk = { bucket: now - 1, level: 0.8 + (hash32(id) % 400) / 1000 };
    while (walk.bucket < now) {
      walk.bucket++;
      const rnd = seededRandom(hash32(`${id}/${walk.bucket}`));
      const drift = (rnd() - 0.5) * 0.3;
      walk.level = Math.min(2.5, Math.max(0.2, walk.level + drift + (1 - walk.level) * 0.2));
      if (rnd() < 0.04) walk.level = Math.min(2.5, walk.level * 1.8);
    }
    this.walks.set(id, walk);
    return walk.level;
  }

  private visible(pod: KObject): boolean {
    if (digString(pod, 'status', 'phase') !== 'Running' || pod.metadata.deletionTimestamp) return false;
    const started = Date.parse(String(digString(pod, 'status', 'startTime') ?? pod.metadata.creationTimestamp));
    const latencyMs = (15_000 + (hash32(pod.metadata.uid) % 45_000)) / this.ctx.options.speed;
    return Date.now() - started >= latencyMs;
  }

  private launcherUsage(pod: KObject): ContainerUsage[] {
    const vmiName = pod.metadata.labels?.['vm.kubevirt.io/name'] ?? '';
    const vmi = this.ctx.store.get(K.vmis, pod.metadata.namespace, vmiName);
    const owned = vmi && vmi.metadata.uid === pod.metadata.labels?.[CREATED_BY_LABEL] ? vmi : undefined;
    const size = sizingOf(digRecord(owned, 'spec', 'domain'));
    const id = pod.metadata.uid;
    const baseline = 0.02 + (hash32(`${id}/cpu`) % 380) / 1000; // 2–40 % per vCPU
    const paused = owned ? isConditionTrue(owned, 'Paused') : false;
    const cores = paused ? 0.002 : Math.min(size.vcpus, size.vcpus * baseline * this.level(`${id}/cpu`));
    const memShare = 0.55 + (hash32(`${id}/mem`) % 350) / 1000; // 55–90 % of guest memory
    const guest = owned ? guestMemoryBytes(owned) : size.guestBytes;
    const memLevel = 0.95 + (this.level(`${id}/mem`) - 1) * 0.05;
    const bytes = guest * Math.min(1, memShare * memLevel) + LAUNCHER_OVERHEAD_BYTES;
    const usage: ContainerUsage[] = [
      { name: 'compute', cores, bytes },
      { name: 'guest-console-log', cores: 0.0000001 + (hash32(id) % 100) / 1e9, bytes: 1452 * 1024 },
    ];
    for (const c of digArray(pod, 'spec', 'containers')) {
      const name = String(c.name);
      if (name.startsWith('volume')) usage.push({ name, cores: 0.000001, bytes: 300 * 1024 });
    }
    return usage;
  }

  private plainUsage(pod: KObject): ContainerUsage[] {
    return digArray(pod, 'spec', 'containers').map((c: Json) => {
      const id = `${pod.metadata.uid}/${String(c.name)}`;
      const resources = (c.resources ?? {}) as { limits?: Record<string, string>; requests?: Record<string, string> };
      const cpuCap = safe(() => cpuMillis(resources.limits?.cpu ?? resources.requests?.cpu ?? '1') / 1000) || 1;
      const memCap =
        safe(() => memoryBytes(resources.limits?.memory ?? resources.requests?.memory ?? '512Mi')) || 512 * 2 ** 20;
      const cores = Math.min(cpuCap, cpuCap * (0.01 + (hash32(`${id}/cpu`) % 200) / 1000) * this.level(`${id}/cpu`));
      const bytes = memCap * (0.2 + (hash32(`${id}/mem`) % 400) / 1000) * (0.95 + (this.level(`${id}/mem`) - 1) * 0.05);
      return { name: String(c.name), cores, bytes };
    });
  }

  /** Each container's usage now (the kubelet's Summary API reports the same numbers). */
  usageOf(pod: KObject): ContainerUsage[] {
    const role = pod.metadata.labels?.['kubevirt.io'];
    return role === 'virt-launcher' ? this.launcherUsage(pod) : this.plainUsage(pod);
  }

  podMetrics(namespace?: string): KObject[] {
    const timestamp = this.timestamp();
    const out: KObject[] = [];
    for (const pod of this.ctx.store.list(K.pods, namespace)) {
      if (!this.visible(pod)) continue;
      out.push({
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'PodMetrics',
        metadata: {
          name: pod.metadata.name,
          namespace: pod.metadata.namespace,
          creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          labels: pod.metadata.labels ?? {},
        } as KObject['metadata'],
        timestamp,
        window: `${(15 + (hash32(pod.metadata.uid) % 100) / 1000).toFixed(3)}s`,
        containers: this.usageOf(pod).map((u) => ({
          name: u.name,
          usage: { cpu: formatNanoCores(u.cores), memory: formatKi(u.bytes) },
        })),
      });
    }
    return out;
  }

  nodeMetrics(): KObject[] {
    const timestamp = this.timestamp();
    const totals = new Map<string, { cores: number; bytes: number }>();
    for (const pod of this.ctx.store.list(K.pods)) {
      const node = digString(pod, 'spec', 'nodeName');
      if (!node || digString(pod, 'status', 'phase') !== 'Running') continue;
      const t = totals.get(node) ?? { cores: 0, bytes: 0 };
      for (const u of this.usageOf(pod)) {
        t.cores += u.cores;
        t.bytes += u.bytes;
      }
      totals.set(node, t);
    }
    return this.ctx.store.list(K.nodes).map((node) => {
      const name = node.metadata.name;
      const pods = totals.get(name) ?? { cores: 0, bytes: 0 };
      // kubelet, containerd, k3s server on the control plane: a steady few hundred millicores and ~2 GiB.
      const cores = pods.cores + (0.25 + (hash32(`${name}/sys`) % 300) / 1000) * this.level(`${name}/sys`);
      const bytes = pods.bytes + (1.5 + (hash32(`${name}/sysmem`) % 1000) / 1000) * 2 ** 30;
      return {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'NodeMetrics',
        metadata: {
          name,
          creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          labels: node.metadata.labels ?? {},
        } as KObject['metadata'],
        timestamp,
        window: `${(20 + (hash32(name) % 100) / 1000).toFixed(3)}s`,
        usage: { cpu: formatNanoCores(cores), memory: formatKi(bytes) },
      };
    });
  }
}
