/**
 * Usage on every replica: only the leader samples metrics.k8s.io and the kubelets (a singleton, replicas.ts), so
 * the leader hands each good round to the followers through one ConfigMap in Corral's namespace
 * (`corral-metrics-sample`, label `corral.dev/metrics=sample`), which every replica watches. A follower takes the
 * round as if it had sampled it (MetricsReadings.importSample), so its usage columns, node/fleet summaries and
 * its own history rings fill exactly as the leader's do. Why this shape (docs/deploy.md, "What is shared how"):
 *
 * - Bounded requests: the leader writes at most once per `minWriteMs` (default one sampling interval, 15 s), with
 *   the newest round at the time of the write; followers cost one watch each, never a request per page view.
 * - Bounded size: the round is gzip-compressed JSON in `binaryData` (~30 bytes a pod); one larger than
 *   `maxBytes` (default 900 KiB, under the apiserver's 1 MiB object limit) is not written, said once in the log,
 *   and the followers turn stale rather than show an old round.
 * - No leader address, port or credential between pods: the apiserver is the only channel, as for the journal.
 * - What a follower does not get: the history the leader recorded before the follower started. Its charts start
 *   when it starts following; when it becomes the leader it keeps that history and samples on from there.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { CorralError } from '../errors';
import type { ClusterPort, KObject, SharedSample } from './cluster-port';

export const METRICS_SHARE_NAME = 'corral-metrics-sample';
export const METRICS_SHARE_LABEL = 'corral.dev/metrics';
export const METRICS_SHARE_REPLICA = 'corral.dev/replica';
const KEY = 'sample.json.gz';

export interface MetricsShareOptions {
  namespace: string;
  identity: string;
  isLeader: () => boolean;
  /** At most one write per this many ms (CORRAL_METRICS_SHARE_MS; default the sampling interval). */
  minWriteMs: number;
  /** Largest compressed round written (default 900 KiB). */
  maxBytes?: number;
  log?: (line: string) => void;
}

export function encodeSample(sample: SharedSample): Buffer {
  return gzipSync(JSON.stringify(sample));
}

/** Reads a round back from the ConfigMap; undefined for anything that is not one. */
export function sampleFromConfigMap(cm: KObject): SharedSample | undefined {
  const data = (cm.binaryData ?? {}) as Record<string, string>;
  try {
    const parsed = JSON.parse(gunzipSync(Buffer.from(data[KEY] ?? '', 'base64')).toString('utf8')) as SharedSample;
    if (typeof parsed.t !== 'number' || typeof parsed.pods !== 'object' || typeof parsed.nodes !== 'object')
      return undefined;
    return { t: parsed.t, pods: parsed.pods, nodes: parsed.nodes, io: parsed.io ?? {}, volumes: parsed.volumes ?? {} };
  } catch {
    return undefined;
  }
}

export class MetricsShare {
  /** Apiserver writes made (the bound the test checks). */
  writes = 0;
  /** Rounds taken from another replica. */
  imported = 0;
  private readonly abort = new AbortController();
  private unsubscribe: (() => void) | undefined;
  private lastWriteAt = 0;
  private lastWrittenT = 0;
  private trailing: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private tooBigSaid = false;
  private lastImportedT = 0;
  private lastImportAt = 0;
  private cadenceMs = 0;
  private staleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: ClusterPort,
    private readonly options: MetricsShareOptions,
  ) {}

  /** Publishes the leader's rounds and follows the shared one; a cluster without a sampler has nothing to share. */
  start(): void {
    const metrics = this.cluster.metrics;
    if (!metrics?.exportSample || !metrics.importSample || this.unsubscribe) return;
    this.unsubscribe = metrics.onSample?.((ok) => {
      if (ok && this.options.isLeader()) this.schedule();
    });
    void this.follow();
    const period = Math.max(100, this.options.minWriteMs);
    this.staleTimer = setInterval(() => this.checkStale(), period);
    this.staleTimer.unref?.();
  }

  close(): void {
    this.unsubscribe?.();
    clearTimeout(this.trailing);
    clearInterval(this.staleTimer);
    this.abort.abort();
  }

  /** Writes now, or once `minWriteMs` has passed since the last write (with the newest round then). */
  private schedule(): void {
    if (this.trailing) return;
    const wait = this.lastWriteAt + this.options.minWriteMs - Date.now();
    if (wait <= 0 && !this.writing) {
      void this.publish();
      return;
    }
    this.trailing = setTimeout(
      () => {
        this.trailing = undefined;
        if (this.options.isLeader()) this.schedule();
      },
      Math.max(wait, 10),
    );
    this.trailing.unref?.();
  }

  private publish(): Promise<void> {
    this.writing ??= this.write()
      .catch((err: unknown) => this.options.log?.(`metrics share: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => (this.writing = undefined));
    return this.writing;
  }

  private async write(): Promise<void> {
    const sample = this.cluster.metrics?.exportSample?.();
    if (!sample || sample.t === this.lastWrittenT) return;
    const bytes = encodeSample(sample);
    const maxBytes = this.options.maxBytes ?? 900 * 1024;
    this.lastWriteAt = Date.now();
    if (bytes.length > maxBytes) {
      if (!this.tooBigSaid)
        this.options.log?.(
          `metrics share: a round of ${Object.keys(sample.pods).length} pods is ${bytes.length} bytes compressed, ` +
            `over ${maxBytes}: followers show no usage until it fits`,
        );
      this.tooBigSaid = true;
      return;
    }
    this.tooBigSaid = false;
    const { namespace, identity } = this.options;
    const metadata = {
      annotations: { [METRICS_SHARE_REPLICA]: identity },
      labels: { 'app.kubernetes.io/managed-by': 'corral', [METRICS_SHARE_LABEL]: 'sample' },
    };
    const binaryData = { [KEY]: bytes.toString('base64') };
    this.writes++;
    try {
      await this.cluster.patch('ConfigMap', namespace, METRICS_SHARE_NAME, { metadata, binaryData });
    } catch (err) {
      if (!(err instanceof CorralError && err.code === 'NOT_FOUND')) throw err;
      this.writes++;
      await this.cluster.create('ConfigMap', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: METRICS_SHARE_NAME, namespace, ...metadata },
        binaryData,
      });
    }
    this.lastWrittenT = sample.t;
  }

  private take(cm: KObject): void {
    if (this.options.isLeader()) return; // the leader samples; its own write comes back here too
    if (cm.metadata.annotations?.[METRICS_SHARE_REPLICA] === this.options.identity) return;
    const sample = sampleFromConfigMap(cm);
    if (!sample || sample.t <= this.lastImportedT) return;
    if (this.lastImportedT) this.cadenceMs = sample.t - this.lastImportedT;
    this.lastImportedT = sample.t;
    this.lastImportAt = Date.now();
    this.imported++;
    this.cluster.metrics?.importSample?.(sample);
  }

  /** A follower whose leader stopped sharing (gone, or metrics-server away) shows no usage rather than old usage. */
  private checkStale(): void {
    if (this.options.isLeader() || !this.lastImportAt) return;
    const allowed = 3 * Math.max(this.options.minWriteMs, this.cadenceMs);
    if (Date.now() - this.lastImportAt <= allowed) return;
    this.lastImportAt = 0;
    this.cluster.metrics?.importSample?.(undefined);
  }

  /** List, then watch from the list's version; start over after the stream ends or fails (backing off). */
  private async follow(): Promise<void> {
    const { namespace } = this.options;
    const labelSelector = `${METRICS_SHARE_LABEL}=sample`;
    const signal = this.abort.signal;
    let backoffMs = 0;
    while (!signal.aborted) {
      const since = Date.now();
      let delivered = false;
      try {
        const page = await this.cluster.listPage('ConfigMap', { namespace, labelSelector });
        for (const cm of page.items) if (cm.metadata.name === METRICS_SHARE_NAME) this.take(cm);
        await this.cluster.watch(
          'ConfigMap',
          { namespace, labelSelector, resourceVersion: page.resourceVersion },
          (change) => {
            delivered = true;
            if (change.type !== 'DELETED' && change.object.metadata.name === METRICS_SHARE_NAME)
              this.take(change.object);
          },
          signal,
        );
      } catch (err) {
        if (!signal.aborted) this.options.log?.(`metrics share watch: ${String(err)}`);
      }
      const failed = !delivered && Date.now() - since < 1000;
      backoffMs = failed ? Math.min(5_000, Math.max(500, backoffMs * 2)) : 0;
      if (!signal.aborted && backoffMs)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoffMs);
          timer.unref?.();
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
    }
  }
}
