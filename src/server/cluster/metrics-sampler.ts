/**
 * metrics.k8s.io, sampled on a timer into memory: one list of PodMetrics and one of NodeMetrics per interval for the
 * whole cluster, so a page of 1000 VMs (or a Proxmox client polling every second) costs no apiserver call at all.
 * metrics-server itself only refreshes every ~15 s, so sampling faster would buy nothing. When metrics.k8s.io is
 * not served (no metrics-server: 404/503) or the cluster is unreachable, the readings are simply empty — usage is
 * decoration, never a reason to fail a request or fill the log.
 *
 * After each good round the kubelets' network and disk counters are read too (one Summary and one cAdvisor request
 * per node, kubelet-io.ts), then the listeners (the metrics store) are told. CORRAL_METRICS_INTERVAL_MS sets the
 * interval (tests run it fast).
 */
import type { IoRates, MetricsReadings, ResourceUsage, SharedSample, VolumeUsage } from '../domain/cluster-port';
import { quantityToNumber } from '../domain/quantity';
import type { KubeHttp } from './kube-http';
import { KubeletIo } from './kubelet-io';

const METRICS_API = '/apis/metrics.k8s.io/v1beta1';

interface RawUsage {
  usage?: { cpu?: string; memory?: string };
}
interface PodMetricsItem extends RawUsage {
  metadata?: { name?: string; namespace?: string };
  containers?: (RawUsage & { name?: string })[];
}
interface MetricsList {
  items?: PodMetricsItem[];
}

interface PodSample {
  total: ResourceUsage;
  containers: Map<string, ResourceUsage>;
}

/** `12345678n` → 0.0123 cores, `1536Ki` → 1572864 bytes; unparsable → 0 (one odd field must not drop a sample). */
export function parseUsage(raw: RawUsage['usage']): ResourceUsage {
  const cpu = quantityToNumber(raw?.cpu);
  const mem = quantityToNumber(raw?.memory);
  return { cpuCores: Number.isFinite(cpu) ? cpu : 0, memoryBytes: Number.isFinite(mem) ? Math.round(mem) : 0 };
}

/** CORRAL_METRICS_INTERVAL_MS (100 ms – 1 h), else 15 s: metrics-server's own resolution. */
export function metricsIntervalFromEnv(env: Record<string, string | undefined> = process.env): number {
  const raw = env.CORRAL_METRICS_INTERVAL_MS?.trim();
  if (!raw) return 15_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000)
    throw new Error(
      `CORRAL_METRICS_INTERVAL_MS must be a whole number of milliseconds from 100 to 3600000, not "${raw}"`,
    );
  return ms;
}

export class MetricsSampler implements MetricsReadings {
  private pods = new Map<string, PodSample>();
  private nodes = new Map<string, ResourceUsage>();
  private lastSample = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private readonly listeners = new Set<(ok: boolean) => void>();

  private readonly io: KubeletIo;

  constructor(
    private readonly http: KubeHttp,
    readonly intervalMs = metricsIntervalFromEnv(),
  ) {
    this.io = new KubeletIo(http);
  }

  /** Samples now, then every interval. Idempotent. */
  start(): void {
    if (this.timer) return;
    void this.sampleNow();
    this.timer = setInterval(() => void this.sampleNow(), this.intervalMs);
    this.timer.unref(); // never keeps a process (or a test run) alive
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether the timer runs (with several replicas only the leader samples: replicas.ts). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** One sample of pods and nodes; resolves true when metrics.k8s.io answered. Concurrent calls share one sample. */
  sampleNow(): Promise<boolean> {
    this.inFlight ??= this.sample().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  pod(namespace: string, name: string, container?: string): ResourceUsage | undefined {
    const sample = this.pods.get(`${namespace}/${name}`);
    if (!sample) return undefined;
    return (container !== undefined ? sample.containers.get(container) : undefined) ?? sample.total;
  }

  node(name: string): ResourceUsage | undefined {
    return this.nodes.get(name);
  }

  sampledAt(): number {
    return this.lastSample;
  }

  podIo(namespace: string, name: string): IoRates | undefined {
    return this.io.pod(namespace, name);
  }

  volume(namespace: string, claim: string): VolumeUsage | undefined {
    return this.io.volume(namespace, claim);
  }

  onSample(listener: (ok: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  exportSample(): SharedSample | undefined {
    if (this.lastSample === 0) return undefined;
    const pods: SharedSample['pods'] = {};
    for (const [key, p] of this.pods) pods[key] = { total: p.total, containers: Object.fromEntries(p.containers) };
    return { t: this.lastSample, pods, nodes: Object.fromEntries(this.nodes), ...this.io.exportRound() };
  }

  importSample(sample: SharedSample | undefined): void {
    if (this.running) return; // this process samples itself (it leads): its own rounds win
    if (!sample) {
      if (this.lastSample === 0) return;
      this.pods = new Map();
      this.nodes = new Map();
      this.io.importRound({}, {});
      this.lastSample = 0;
      this.notify(false);
      return;
    }
    this.pods = new Map(
      Object.entries(sample.pods).map(([key, p]) => [
        key,
        { total: p.total, containers: new Map(Object.entries(p.containers)) },
      ]),
    );
    this.nodes = new Map(Object.entries(sample.nodes));
    this.io.importRound(sample.io, sample.volumes);
    this.lastSample = Math.max(sample.t, this.lastSample + 1);
    this.notify(true);
  }

  private notify(ok: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(ok);
      } catch (err) {
        // A reader's bug must not stop the sampling timer.
        console.warn(`[corral] metrics listener failed: ${String(err)}`);
      }
    }
  }

  private async sample(): Promise<boolean> {
    // The round's time is when it started (when metrics.k8s.io was asked), so rounds stay one interval apart even
    // when the kubelet reads of one take long.
    const startedAt = Date.now();
    try {
      const [pods, nodes] = await Promise.all([
        this.http.request<MetricsList>({ method: 'GET', path: `${METRICS_API}/pods`, what: 'reading pod metrics' }),
        this.http.request<MetricsList>({ method: 'GET', path: `${METRICS_API}/nodes`, what: 'reading node metrics' }),
      ]);
      this.pods = new Map(
        (pods?.items ?? []).map((item) => [
          `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`,
          podSample(item),
        ]),
      );
      this.nodes = new Map((nodes?.items ?? []).map((item) => [item.metadata?.name ?? '', parseUsage(item.usage)]));
      // Network and disk counters: one Summary and one cAdvisor read per node (never per VM or per request).
      await this.io.sample([...this.nodes.keys()].filter((n) => n !== ''));
      // Strictly increasing, so readers can tell two samples apart even within one millisecond.
      this.lastSample = Math.max(startedAt, this.lastSample + 1);
      this.notify(true);
      return true;
    } catch {
      // No metrics-server, or the cluster is away: stale numbers would lie, so forget them.
      this.pods = new Map();
      this.nodes = new Map();
      this.lastSample = 0;
      this.notify(false);
      return false;
    }
  }
}

function podSample(item: PodMetricsItem): PodSample {
  const containers = new Map<string, ResourceUsage>();
  const total: ResourceUsage = { cpuCores: 0, memoryBytes: 0 };
  for (const c of item.containers ?? []) {
    const usage = parseUsage(c.usage);
    containers.set(c.name ?? '', usage);
    total.cpuCores += usage.cpuCores;
    total.memoryBytes += usage.memoryBytes;
  }
  return { total, containers };
}
