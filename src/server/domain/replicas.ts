/**
 * Running as several replicas: this process's identity, its heartbeat Lease, leader election for the singletons, the
 * durable task journal and the leader's metrics rounds shared with the followers, wired together (leases.ts,
 * task-store.ts, metrics-share.ts). One replica alone runs the same way — it is
 * simply always the leader — so there is no separate single-replica mode to drift apart.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ClusterPort } from './cluster-port';
import { LeaderElector, ReplicaHeartbeat } from './leases';
import { MetricsShare } from './metrics-share';
import { TaskStore } from './task-store';
import type { TaskJournal } from './tasks';

export interface ReplicaConfig {
  /** Unique per process: the pod name (POD_NAME / HOSTNAME) plus a random tag, so a restarted pod is a new replica. */
  identity: string;
  /** Lease duration for leadership and heartbeats (CORRAL_LEASE_SECONDS, default 15). */
  leaseSeconds: number;
  /** How long a task's changes are batched before one write (CORRAL_TASK_FLUSH_MS, default 1000). */
  flushMs: number;
  /** Tasks kept in the cluster journal (CORRAL_TASK_RETENTION, default 1000) ... */
  retainCount: number;
  /** ... and for how long at most (CORRAL_TASK_RETENTION_DAYS, default 14). */
  retainDays: number;
  /** How often the leader prunes the journal (default 60 s). */
  pruneEveryMs: number;
  /** The leader shares its metrics round at most this often (CORRAL_METRICS_SHARE_MS; default the sampling interval). */
  metricsShareMs: number;
}

function intFromEnv(env: NodeJS.ProcessEnv, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${key} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return n;
}

export function replicaConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ReplicaConfig {
  const base = (env.POD_NAME || env.HOSTNAME || hostname() || 'corral').toLowerCase();
  return {
    identity: `${base}-${randomBytes(3).toString('hex')}`,
    leaseSeconds: intFromEnv(env, 'CORRAL_LEASE_SECONDS', 15, 1, 300),
    flushMs: intFromEnv(env, 'CORRAL_TASK_FLUSH_MS', 1000, 10, 60_000),
    retainCount: intFromEnv(env, 'CORRAL_TASK_RETENTION', 1000, 10, 100_000),
    retainDays: intFromEnv(env, 'CORRAL_TASK_RETENTION_DAYS', 14, 1, 3650),
    pruneEveryMs: 60_000,
    // Every round by default: the sampling interval (CORRAL_METRICS_INTERVAL_MS, 15 s unless set).
    metricsShareMs: intFromEnv(
      env,
      'CORRAL_METRICS_SHARE_MS',
      intFromEnv(env, 'CORRAL_METRICS_INTERVAL_MS', 15_000, 100, 3_600_000),
      100,
      3_600_000,
    ),
  };
}

/** The tag task ids carry so two replicas (or two lives of one) never mint the same id. */
export const idTagOf = (identity: string): string => `${identity.slice(-4)}.`;

export class Replicas {
  readonly elector: LeaderElector;
  readonly heartbeat: ReplicaHeartbeat;
  readonly store: TaskStore;
  readonly metricsShare: MetricsShare;
  private pruneTimer: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;

  constructor(
    cluster: ClusterPort,
    journal: TaskJournal,
    readonly config: ReplicaConfig,
    namespace: string,
    private readonly log: (line: string) => void = (line) => console.log(`[corral] ${line}`),
  ) {
    const lease = { namespace, identity: config.identity, leaseSeconds: config.leaseSeconds, log };
    this.elector = new LeaderElector(cluster, lease);
    this.heartbeat = new ReplicaHeartbeat(cluster, lease);
    this.store = new TaskStore(cluster, journal, { ...lease, ...config });
    this.metricsShare = new MetricsShare(cluster, {
      namespace,
      identity: config.identity,
      isLeader: () => this.elector.isLeader,
      minWriteMs: config.metricsShareMs,
      log,
    });
  }

  get identity(): string {
    return this.config.identity;
  }

  /** Heartbeat first (a task is never written before its owner's lease exists), then the journal and the election. */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.heartbeat.start();
      await this.store.start();
      this.elector.start();
      this.metricsShare.start();
      this.elector.onChange((leading) => {
        clearInterval(this.pruneTimer);
        this.pruneTimer = undefined;
        if (!leading) return;
        const prune = () =>
          void this.store.prune().catch((err: unknown) => this.log(`journal retention: ${String(err)}`));
        prune();
        this.pruneTimer = setInterval(prune, this.config.pruneEveryMs);
        this.pruneTimer.unref?.();
      });
    })();
    return this.started;
  }

  /** Leaves gracefully: leadership released, journal flushed, heartbeat deleted (survivors need not wait). */
  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    this.metricsShare.close();
    await this.elector.stop();
    await this.store.close();
    await this.heartbeat.stop();
  }
}
