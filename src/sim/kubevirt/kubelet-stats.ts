/**
 * The kubelet's own stats endpoints for the embedded cluster, reached like on a real cluster through the
 * apiserver's node proxy:
 *
 * - `GET /api/v1/nodes/{node}/proxy/stats/summary`: the Summary API (JSON) — per pod `podRef`, `startTime`, the
 *   containers' cpu/memory, the pod's `network` counters (`rxBytes`/`txBytes`, per interface too) and, for a plain
 *   (non-launcher) pod, its claim-backed `volume` list: `usedBytes` measured from the files its shells wrote
 *   (consoles/container-files.ts), `capacityBytes` from the claim. A VM's disk claims are not listed: the embedded
 *   cluster has no disk image content to measure, and a made-up number would be worse than none.
 * - `GET /api/v1/nodes/{node}/proxy/metrics/cadvisor`: cAdvisor's Prometheus text — `container_fs_reads_bytes_total`
 *   and `container_fs_writes_bytes_total` per container and device, plus the pod cgroup's own line (`container=""`,
 *   the sum of its containers, which a reader must not add twice), each with a millisecond timestamp.
 *
 * Counters are cumulative per pod (a new pod — a VM restart — starts from zero) and grow at rates driven by the same
 * seeded random walks as the pod's CPU (metrics.ts): a busy VM moves more bytes, a paused one almost none. Rates are
 * bytes per wall-clock second even when the cluster's clock is sped up, so the numbers stay plausible.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RawRoute, SimContext } from '../module.js';
import { notFound } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { methodNotAllowed, notFoundPath, sendJson, sendText } from '../http/wire.js';
import { K, LAUNCHER_IMAGE } from './keys.js';
import { CREATED_BY_LABEL } from './launcher-pod.js';
import type { SimMetrics } from './metrics.js';
import { claimBytesUsed } from '../consoles/container-files.js';
import { parseQuantity } from './quantity.js';
import { digArray, digString, hash32, isConditionTrue } from './objects.js';

const PROXY = /^\/api\/v1\/nodes\/([^/]+)\/proxy\/(stats\/summary|metrics\/cadvisor)\/?$/;
/** Counters of pods not read for this long are forgotten. */
const FORGET_MS = 10 * 60_000;
const HOST_DEVICE = '/dev/nvme0n1';

interface Rates {
  rx: number;
  tx: number;
  read: number;
  write: number;
}

interface Counters extends Rates {
  at: number;
}

/** A log-uniform baseline between lo and hi, fixed per object. */
function baseline(id: string, lo: number, hi: number): number {
  return lo * (hi / lo) ** ((hash32(id) % 1000) / 1000);
}

export class KubeletStats {
  /** Per endpoint, so each answer's counters agree with its own timestamps (the Summary's are whole seconds). */
  private readonly counters = { net: new Map<string, Counters>(), disk: new Map<string, Counters>() };

  constructor(
    private readonly ctx: SimContext,
    private readonly metrics: SimMetrics,
  ) {}

  /** Whether a request is for these endpoints (any method: others are answered 405). */
  static serves(url: URL, _method: string): boolean {
    return PROXY.test(url.pathname);
  }

  readonly route: RawRoute = {
    matches: (url, method) => KubeletStats.serves(url, method),
    handle: (_ctx: SimContext, req: IncomingMessage, res: ServerResponse, url: URL) => {
      const [, rawNode, what] = PROXY.exec(url.pathname) ?? [];
      if ((req.method ?? 'GET') !== 'GET') throw methodNotAllowed((req.method ?? '').toLowerCase(), 'nodes/proxy');
      const node = decodeURIComponent(rawNode ?? '');
      if (!this.ctx.store.get(K.nodes, undefined, node)) throw notFound('', 'nodes', node);
      if (what === 'stats/summary') return sendJson(res, 200, this.summary(node));
      if (what === 'metrics/cadvisor') return sendText(res, 200, this.cadvisor(node));
      throw notFoundPath();
    },
  };

  private podsOn(node: string): KObject[] {
    return this.ctx.store
      .list(K.pods)
      .filter((p) => digString(p, 'spec', 'nodeName') === node && digString(p, 'status', 'phase') === 'Running');
  }

  /** Bytes per second a pod moves now. */
  private rates(pod: KObject): Rates {
    const id = pod.metadata.uid;
    if (pod.metadata.labels?.['kubevirt.io'] !== 'virt-launcher') {
      const load = this.metrics.level(`${id}/io`);
      return {
        rx: baseline(`${id}/rx`, 500, 200e3) * load,
        tx: baseline(`${id}/tx`, 500, 200e3) * load,
        read: baseline(`${id}/rd`, 100, 100e3) * load,
        write: baseline(`${id}/wr`, 100, 200e3) * load,
      };
    }
    const vmi = this.ctx.store.get(K.vmis, pod.metadata.namespace, pod.metadata.labels?.['vm.kubevirt.io/name'] ?? '');
    const owned = vmi && vmi.metadata.uid === pod.metadata.labels?.[CREATED_BY_LABEL] ? vmi : undefined;
    if (owned && isConditionTrue(owned, 'Paused')) return { rx: 40, tx: 20, read: 0, write: 0 };
    // Half the swing follows the guest's CPU, half its own I/O walk (bursts of disk or network on a quiet CPU).
    const load = 0.5 * this.metrics.level(`${id}/cpu`) + 0.5 * this.metrics.level(`${id}/io`);
    const rx = baseline(`${id}/rx`, 2e3, 2e6);
    const read = baseline(`${id}/rd`, 5e3, 5e6);
    return {
      rx: rx * load,
      tx: rx * (0.3 + (hash32(`${id}/txshare`) % 2700) / 1000) * load,
      read: read * load,
      write: read * (0.2 + (hash32(`${id}/wrshare`) % 1800) / 1000) * load,
    };
  }

  /** A pod's counters now: the last ones plus rate × elapsed wall time (a first reading integrates since start). */
  private countersOf(pod: KObject, now: number, which: 'net' | 'disk'): Counters {
    const rates = this.rates(pod);
    let c = this.counters[which].get(pod.metadata.uid);
    if (!c) {
      const started = Date.parse(digString(pod, 'status', 'startTime') ?? pod.metadata.creationTimestamp ?? '');
      const since = Number.isFinite(started) ? Math.max(0, now - started) : 0;
      c = { at: now - since, rx: 0, tx: 0, read: 0, write: 0 };
    }
    const seconds = Math.max(0, now - c.at) / 1000;
    const next: Counters = {
      at: Math.max(c.at, now),
      rx: Math.round(c.rx + rates.rx * seconds),
      tx: Math.round(c.tx + rates.tx * seconds),
      read: Math.round(c.read + rates.read * seconds),
      write: Math.round(c.write + rates.write * seconds),
    };
    this.counters[which].set(pod.metadata.uid, next);
    return next;
  }

  private forget(now: number, which: 'net' | 'disk'): void {
    for (const [uid, c] of this.counters[which]) if (now - c.at > FORGET_MS) this.counters[which].delete(uid);
  }

  summary(node: string): unknown {
    const now = Math.floor(Date.now() / 1000) * 1000; // metav1.Time has whole seconds
    const time = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    let nodeRx = 0;
    let nodeTx = 0;
    const pods = this.podsOn(node).map((pod) => {
      const c = this.countersOf(pod, now, 'net');
      nodeRx += c.rx;
      nodeTx += c.tx;
      const eth0 = { name: 'eth0', rxBytes: c.rx, rxErrors: 0, txBytes: c.tx, txErrors: 0 };
      return {
        podRef: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
        startTime: digString(pod, 'status', 'startTime') ?? pod.metadata.creationTimestamp,
        containers: this.metrics.usageOf(pod).map((ct) => ({
          name: ct.name,
          startTime: digString(pod, 'status', 'startTime') ?? pod.metadata.creationTimestamp,
          cpu: { time, usageNanoCores: Math.round(ct.cores * 1e9) },
          memory: { time, workingSetBytes: Math.round(ct.bytes) },
        })),
        network: { time, ...eth0, interfaces: [eth0] },
        ...(pod.metadata.labels?.['kubevirt.io'] === 'virt-launcher' ? {} : { volume: this.volumesOf(pod, time) }),
      };
    });
    this.forget(now, 'net');
    const started = this.ctx.store.get(K.nodes, undefined, node)?.metadata.creationTimestamp;
    // The node's own interface carries its pods' traffic plus a little of its own (kubelet, image pulls, etcd).
    const own = baseline(`${node}/sys-net`, 5e3, 50e3) * Math.max(0, now - Date.parse(started ?? '')) * 1e-3;
    const sys = Number.isFinite(own) ? Math.round(own) : 0;
    return {
      node: {
        nodeName: node,
        startTime: started,
        network: { time, name: 'eth0', rxBytes: nodeRx + sys, rxErrors: 0, txBytes: nodeTx + sys, txErrors: 0 },
      },
      pods,
    };
  }

  /** The pod's claim-backed volumes as the Summary API lists them. */
  private volumesOf(pod: KObject, time: string): unknown[] {
    const namespace = pod.metadata.namespace ?? '';
    const out: unknown[] = [];
    for (const volume of digArray(pod, 'spec', 'volumes')) {
      const claimName = (volume.persistentVolumeClaim as { claimName?: string } | undefined)?.claimName;
      const claim = claimName ? this.ctx.store.get(K.pvcs, namespace, claimName) : undefined;
      if (!claim) continue;
      const size =
        digString(claim, 'status', 'capacity', 'storage') ??
        digString(claim, 'spec', 'resources', 'requests', 'storage');
      const capacity = size ? Math.round(parseQuantity(size)) : 0;
      if (!(capacity > 0)) continue;
      const used = Math.min(capacity, claimBytesUsed(this.ctx.store, pod, claim.metadata.uid));
      out.push({
        time,
        name: String(volume.name),
        pvcRef: { name: claimName, namespace },
        availableBytes: capacity - used,
        capacityBytes: capacity,
        usedBytes: used,
      });
    }
    return out;
  }

  cadvisor(node: string): string {
    const now = Date.now();
    const reads: string[] = [];
    const writes: string[] = [];
    for (const pod of this.podsOn(node)) {
      const c = this.countersOf(pod, now, 'disk');
      const ns = pod.metadata.namespace ?? '';
      const name = pod.metadata.name;
      const cgroup = `/kubepods/burstable/pod${pod.metadata.uid}`;
      const launcher = pod.metadata.labels?.['kubevirt.io'] === 'virt-launcher';
      const containers = digArray(pod, 'spec', 'containers').map((ct) => String(ct.name));
      // The guest's disk I/O is QEMU's, in `compute`; a plain pod's goes to its first container.
      const busy = launcher ? 'compute' : containers[0];
      const line = (container: string, image: string, id: string, value: number) =>
        `{container="${esc(container)}",device="${HOST_DEVICE}",id="${esc(id)}",image="${esc(image)}",` +
        `name="${esc(id.split('/').pop() ?? '')}",namespace="${esc(ns)}",pod="${esc(name)}"} ${value} ${now}`;
      reads.push(line('', '', cgroup, c.read));
      writes.push(line('', '', cgroup, c.write));
      for (const container of containers) {
        const spec = digArray(pod, 'spec', 'containers').find((ct) => ct.name === container);
        const image = String(spec?.image ?? (launcher ? LAUNCHER_IMAGE : ''));
        const id = `${cgroup}/${(hash32(`${pod.metadata.uid}/${container}`) >>> 0).toString(16).padStart(8, '0')}`;
        reads.push(line(container, image, id, container === busy ? c.read : 0));
        writes.push(line(container, image, id, container === busy ? c.write : 0));
      }
    }
    this.forget(now, 'disk');
    return [
      '# HELP container_fs_reads_bytes_total Cumulative count of bytes read',
      '# TYPE container_fs_reads_bytes_total counter',
      ...reads.map((l) => `container_fs_reads_bytes_total${l}`),
      '# HELP container_fs_writes_bytes_total Cumulative count of bytes written',
      '# TYPE container_fs_writes_bytes_total counter',
      ...writes.map((l) => `container_fs_writes_bytes_total${l}`),
      '',
    ].join('\n');
  }
}

/** Prometheus label-value escaping: backslash, double quote, newline. */
function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
