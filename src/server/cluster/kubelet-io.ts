/**
 * Network and disk rates of pods from the kubelets, read once per node per sampling round through the apiserver's
 * node proxy (RBAC: `nodes/proxy` get):
 *
 * - network: the Summary API, `/api/v1/nodes/{node}/proxy/stats/summary` — per pod `network.rxBytes/txBytes`
 *   (summed over `interfaces` when listed: a VM's bridged NICs are pod interfaces too);
 * - disk: cAdvisor, `/api/v1/nodes/{node}/proxy/metrics/cadvisor` — `container_fs_reads_bytes_total` and
 *   `container_fs_writes_bytes_total`, summed over a pod's containers and devices (the pod cgroup's own
 *   `container=""` line is their sum already and is skipped).
 *
 * - volumes: the same Summary answer's per-pod `volume` list — `usedBytes`/`capacityBytes` of every mounted volume that
 *   names its claim (`pvcRef`), so a container's data volume shows how full it is. Only mounted volumes are reported:
 *   a claim no running pod uses has no reading (shown as unknown, never as empty).
 *
 * Network and disk are cumulative counters; a rate is the counter's growth over the time between two readings (the sources' own
 * timestamps when they carry them). A counter that went down (a container restarted) gives no rate for that
 * interval instead of a negative or huge one; the first reading of a pod gives none either. A node whose kubelet
 * does not serve an endpoint (404, 403 without `nodes/proxy`) leaves those fields absent.
 */
import type { IoRates, VolumeUsage } from '../domain/cluster-port';
import type { KubeHttp } from './kube-http';

interface PodCounters {
  t: number;
  a: number;
  b: number;
}

interface SummaryPod {
  podRef?: { name?: string; namespace?: string; uid?: string };
  volume?: {
    name?: string;
    usedBytes?: number;
    capacityBytes?: number;
    pvcRef?: { name?: string; namespace?: string };
  }[];
  network?: {
    time?: string;
    rxBytes?: number;
    txBytes?: number;
    interfaces?: { rxBytes?: number; txBytes?: number }[];
  };
}

/** Pod network counters of one Summary API answer, keyed `namespace/name`. */
export function parseSummary(body: unknown, receivedAt: number): Map<string, PodCounters> {
  const out = new Map<string, PodCounters>();
  const pods = (body as { pods?: SummaryPod[] } | undefined)?.pods;
  if (!Array.isArray(pods)) return out;
  for (const pod of pods) {
    const net = pod.network;
    if (!pod.podRef?.name || !net) continue;
    const list = Array.isArray(net.interfaces) && net.interfaces.length > 0 ? net.interfaces : [net];
    let rx = 0;
    let tx = 0;
    for (const i of list) {
      rx += typeof i.rxBytes === 'number' ? i.rxBytes : Number.NaN;
      tx += typeof i.txBytes === 'number' ? i.txBytes : Number.NaN;
    }
    if (!Number.isFinite(rx) || !Number.isFinite(tx)) continue;
    const t = net.time ? Date.parse(net.time) : Number.NaN;
    out.set(`${pod.podRef.namespace ?? ''}/${pod.podRef.name}`, {
      t: Number.isFinite(t) ? t : receivedAt,
      a: rx,
      b: tx,
    });
  }
  return out;
}

/** Usage of every claim-backed volume in one Summary API answer, keyed `namespace/claim`. */
export function parseVolumes(body: unknown): Map<string, VolumeUsage> {
  const out = new Map<string, VolumeUsage>();
  const pods = (body as { pods?: SummaryPod[] } | undefined)?.pods;
  if (!Array.isArray(pods)) return out;
  for (const pod of pods) {
    if (!Array.isArray(pod.volume)) continue;
    for (const v of pod.volume) {
      const claim = v?.pvcRef?.name;
      const used = v?.usedBytes;
      const capacity = v?.capacityBytes;
      if (!claim || typeof used !== 'number' || typeof capacity !== 'number') continue;
      if (!Number.isFinite(used) || !Number.isFinite(capacity) || used < 0 || capacity <= 0) continue;
      out.set(`${v.pvcRef?.namespace ?? pod.podRef?.namespace ?? ''}/${claim}`, {
        usedBytes: used,
        capacityBytes: capacity,
      });
    }
  }
  return out;
}

const READS = 'container_fs_reads_bytes_total';
const WRITES = 'container_fs_writes_bytes_total';

/** `{a="x",b="y\"z"}` → labels; undefined when malformed. */
function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('="', i);
    if (eq < 0) return undefined;
    const name = text.slice(i, eq).trim();
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\' && j + 1 < text.length) {
        const next = text[++j];
        value += next === 'n' ? '\n' : next;
      } else value += text[j];
    }
    if (j >= text.length) return undefined;
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

/** Pod disk counters (reads, writes) of one cAdvisor answer, keyed `namespace/pod`. */
export function parseCadvisor(text: string, receivedAt: number): Map<string, PodCounters> {
  const out = new Map<string, PodCounters>();
  if (typeof text !== 'string') return out;
  for (const line of text.split('\n')) {
    const isRead = line.startsWith(`${READS}{`);
    if (!isRead && !line.startsWith(`${WRITES}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels = parseLabels(line.slice(line.indexOf('{') + 1, close));
    if (!labels?.pod || !labels.container || labels.container === 'POD') continue;
    const [rawValue, rawTime] = line
      .slice(close + 1)
      .trim()
      .split(/\s+/);
    const value = Number(rawValue);
    if (!Number.isFinite(value)) continue;
    const t = rawTime !== undefined ? Number(rawTime) : Number.NaN;
    const key = `${labels.namespace ?? ''}/${labels.pod}`;
    const entry = out.get(key) ?? { t: Number.isFinite(t) ? t : receivedAt, a: 0, b: 0 };
    if (isRead) entry.a += value;
    else entry.b += value;
    out.set(key, entry);
  }
  return out;
}

/** Rates from successive counter readings, per pod and series. */
export class CounterRates {
  private readonly last = new Map<string, { t: number; a: number; b: number; rate?: [number, number] }>();

  /** Rates of every pod in `readings`; pods not read this round are forgotten. */
  update(readings: Map<string, PodCounters>): Map<string, [number, number]> {
    const rates = new Map<string, [number, number]>();
    for (const [key, now] of readings) {
      const prev = this.last.get(key);
      let rate: [number, number] | undefined;
      if (prev) {
        const seconds = (now.t - prev.t) / 1000;
        if (seconds <= 0)
          rate = prev.rate; // the kubelet served the same reading again
        else if (now.a >= prev.a && now.b >= prev.b) rate = [(now.a - prev.a) / seconds, (now.b - prev.b) / seconds];
        // else: a counter went down (restart) — no rate for this interval
      }
      this.last.set(key, { ...now, ...(rate ? { rate } : {}) });
      if (rate) rates.set(key, rate);
    }
    return rates;
  }

  /** Forgets pods that were not read (their node answered, they were not on it). */
  retain(keys: Set<string>): void {
    for (const key of this.last.keys()) if (!keys.has(key)) this.last.delete(key);
  }
}

/** Reads every node's kubelet once and turns the counters into per-pod rates. */
export class KubeletIo {
  private readonly net = new CounterRates();
  private readonly disk = new CounterRates();
  private rates = new Map<string, IoRates>();
  private volumes = new Map<string, VolumeUsage>();

  constructor(private readonly http: KubeHttp) {}

  pod(namespace: string, name: string): IoRates | undefined {
    return this.rates.get(`${namespace}/${name}`);
  }

  /** The last reading of a mounted claim; undefined when no answering kubelet reported it. */
  volume(namespace: string, claim: string): VolumeUsage | undefined {
    return this.volumes.get(`${namespace}/${claim}`);
  }

  /** The last round's rates and volumes, keyed `namespace/name` (what a follower replica is handed). */
  exportRound(): { io: Record<string, IoRates>; volumes: Record<string, VolumeUsage> } {
    return { io: Object.fromEntries(this.rates), volumes: Object.fromEntries(this.volumes) };
  }

  /** Takes another replica's round as the last one (the counters stay this process's own). */
  importRound(io: Record<string, IoRates>, volumes: Record<string, VolumeUsage>): void {
    this.rates = new Map(Object.entries(io));
    this.volumes = new Map(Object.entries(volumes));
  }

  /** One round over `nodes`; a node or endpoint that fails only leaves its pods' fields absent. */
  async sample(nodes: readonly string[]): Promise<void> {
    const answers = await Promise.all(
      nodes.map(async (node) => {
        const base = `/api/v1/nodes/${encodeURIComponent(node)}/proxy`;
        const [summary, cadvisor] = await Promise.all([
          this.http
            .request({ method: 'GET', path: `${base}/stats/summary`, what: `reading kubelet stats of node ${node}` })
            .then((body) => ({ net: parseSummary(body, Date.now()), volumes: parseVolumes(body) }))
            .catch(() => undefined),
          this.http
            .request<string>({
              method: 'GET',
              path: `${base}/metrics/cadvisor`,
              what: `reading cAdvisor of node ${node}`,
            })
            .then((text) => parseCadvisor(text, Date.now()))
            .catch(() => undefined),
        ]);
        return { summary, cadvisor };
      }),
    );
    const rates = new Map<string, IoRates>();
    const merge = (source: CounterRates, readings: Map<string, PodCounters>, a: keyof IoRates, b: keyof IoRates) => {
      for (const [key, [ra, rb]] of source.update(readings)) {
        const entry = rates.get(key) ?? {};
        entry[a] = ra;
        entry[b] = rb;
        rates.set(key, entry);
      }
    };
    const netRead = new Map<string, PodCounters>();
    const diskRead = new Map<string, PodCounters>();
    const volumes = new Map<string, VolumeUsage>();
    for (const { summary, cadvisor } of answers) {
      for (const [k, v] of summary?.net ?? []) netRead.set(k, v);
      for (const [k, v] of summary?.volumes ?? []) volumes.set(k, v);
      for (const [k, v] of cadvisor ?? []) diskRead.set(k, v);
    }
    merge(this.net, netRead, 'netin', 'netout');
    merge(this.disk, diskRead, 'diskread', 'diskwrite');
    // Keep the counters of pods on nodes that did not answer this time: the next good reading spans the gap.
    if (answers.every((a) => a.summary)) this.net.retain(new Set(netRead.keys()));
    if (answers.every((a) => a.cadvisor)) this.disk.retain(new Set(diskRead.keys()));
    this.rates = rates;
    this.volumes = volumes;
  }
}
