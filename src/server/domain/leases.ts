/**
 * Replicas coordinate through coordination.k8s.io Leases in Corral's namespace, as Kubernetes controllers do:
 *
 * - `corral-leader`: leader election for the singletons (metrics sampling, journal retention). The holder renews
 *   it every `leaseSeconds / 3`; another replica takes it over once it has seen the same record unchanged for a
 *   whole lease duration — measured on its own clock from when it first saw that record (client-go's rule), so
 *   clocks that disagree between nodes do not matter. Every write carries the resourceVersion it read, so two
 *   candidates never both win.
 * - `corral-replica-<id>` (label `corral.dev/replica`): one heartbeat per replica, renewed on the same period. The
 *   task journal uses it to tell a replica that is gone (its running tasks are marked interrupted) from a busy one.
 *   A replica that stops gracefully deletes its own.
 */
import { CorralError } from '../errors';
import type { ClusterPort, KObject } from './cluster-port';

export const LEADER_LEASE = 'corral-leader';
export const REPLICA_LABEL = 'corral.dev/replica';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** MicroTime as the apiserver writes it: RFC 3339 with microseconds. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** A Lease name for a replica id (DNS subdomain: lowercase alphanumerics and '-'). */
export function replicaLeaseName(replicaId: string): string {
  const safe = replicaId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `corral-replica-${safe || 'x'}`.slice(0, 253);
}

const isConflict = (err: unknown) => err instanceof CorralError && err.code === 'CONFLICT';

/**
 * Expiry by local observation: a record (holder + renewTime) is expired once this process has watched it stay the
 * same for its lease duration.
 */
export class LeaseObserver {
  private readonly seen = new Map<string, { record: string; at: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  expired(name: string, spec: LeaseSpec | undefined): boolean {
    const record = `${spec?.holderIdentity ?? ''}@${spec?.renewTime ?? ''}`;
    const prev = this.seen.get(name);
    const at = this.now();
    if (!prev || prev.record !== record) {
      this.seen.set(name, { record, at });
      return false;
    }
    return at - prev.at >= (spec?.leaseDurationSeconds ?? 15) * 1000;
  }

  forget(name: string): void {
    this.seen.delete(name);
  }
}

export interface LeaseOptions {
  namespace: string;
  identity: string;
  leaseSeconds: number;
  now?: () => Date;
  log?: (line: string) => void;
}

/** Leader election over one Lease; `onChange(true|false)` when this replica gains or loses leadership. */
export class LeaderElector {
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(leading: boolean) => void>();
  private readonly observer: LeaseObserver;
  private lastRenew = 0;
  private stopped = false;
  private round: Promise<void> = Promise.resolve();

  constructor(
    private readonly cluster: ClusterPort,
    private readonly options: LeaseOptions,
    private readonly name = LEADER_LEASE,
  ) {
    this.observer = new LeaseObserver(() => this.now().getTime());
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Called at once with the current state, then on every change. Returns an unsubscribe function. */
  onChange(listener: (leading: boolean) => void): () => void {
    this.listeners.add(listener);
    listener(this.leading);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.timer || this.stopped) return;
    const period = Math.max(200, (this.options.leaseSeconds * 1000) / 3);
    let busy = false;
    const tick = () => {
      if (busy) return; // a slow apiserver: never two rounds at once
      busy = true;
      this.round = this.tryAcquireOrRenew()
        .catch((err: unknown) => {
          // Unreachable or refused: a leader that cannot renew within its lease steps down (another may take over).
          if (this.leading && this.now().getTime() - this.lastRenew > this.options.leaseSeconds * 1000)
            this.setLeading(false);
          this.options.log?.(`leader election: ${err instanceof Error ? err.message : String(err)}`);
        })
        .finally(() => (busy = false));
    };
    tick();
    this.timer = setInterval(tick, period);
    this.timer.unref?.();
  }

  /** Stops campaigning; a leader releases the Lease (holder cleared) so a survivor takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = await this.cluster.fetch('Lease', this.options.namespace, this.name);
      const spec = lease?.spec as LeaseSpec | undefined;
      if (lease && spec?.holderIdentity === this.options.identity)
        await this.cluster.patch('Lease', this.options.namespace, this.name, {
          metadata: { resourceVersion: lease.metadata.resourceVersion },
          spec: { holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(this.now()) },
        });
    } catch {
      // The others take over when the lease runs out.
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.options.log?.(leading ? `${this.options.identity} is the leader` : `${this.options.identity} stopped leading`);
    for (const l of this.listeners) l(leading);
  }

  private async tryAcquireOrRenew(): Promise<void> {
    if (this.stopped) return;
    const { namespace, identity, leaseSeconds } = this.options;
    const now = this.now();
    const lease = await this.cluster.fetch('Lease', namespace, this.name);
    if (this.stopped) return;
    if (!lease) {
      try {
        await this.cluster.create(
          'Lease',
          leaseObject(this.name, namespace, {
            holderIdentity: identity,
            leaseDurationSeconds: leaseSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          }),
        );
        this.lastRenew = now.getTime();
        this.setLeading(true);
      } catch (err) {
        if (!isConflict(err)) throw err; // another candidate created it first
      }
      return;
    }
    const spec = (lease.spec ?? {}) as LeaseSpec;
    const held = !!spec.holderIdentity && spec.holderIdentity !== identity;
    if (held && !this.observer.expired(this.name, spec)) {
      this.setLeading(false);
      return;
    }
    const transition = spec.holderIdentity !== identity;
    try {
      await this.cluster.patch('Lease', namespace, this.name, {
        metadata: { resourceVersion: lease.metadata.resourceVersion },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: leaseSeconds,
          renewTime: microTime(now),
          ...(transition
            ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + (held ? 1 : 0) }
            : {}),
        },
      });
      this.lastRenew = now.getTime();
      this.setLeading(true);
    } catch (err) {
      if (!isConflict(err)) throw err;
      this.setLeading(false); // someone else renewed or took it between our read and write
    }
  }
}

/** This replica's heartbeat Lease, renewed every `leaseSeconds / 3` until stopped (then deleted). */
export class ReplicaHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<unknown> = Promise.resolve();
  readonly leaseName: string;

  constructor(
    private readonly cluster: ClusterPort,
    private readonly options: LeaseOptions,
  ) {
    this.leaseName = replicaLeaseName(options.identity);
  }

  /** Resolves after the first heartbeat was written (or failed: it is retried on the timer). */
  start(): Promise<void> {
    let busy = false;
    const beat = () => {
      if (busy) return this.round;
      busy = true;
      this.round = this.beat()
        .catch((err: unknown) =>
          this.options.log?.(`replica heartbeat: ${err instanceof Error ? err.message : String(err)}`),
        )
        .finally(() => (busy = false));
      return this.round;
    };
    const first = beat();
    this.timer = setInterval(() => void beat(), Math.max(200, (this.options.leaseSeconds * 1000) / 3));
    this.timer.unref?.();
    return first.then(() => undefined);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
    await this.cluster.remove('Lease', this.options.namespace, this.leaseName).catch(() => false);
  }

  private async beat(): Promise<void> {
    const now = microTime(this.options.now?.() ?? new Date());
    const spec: LeaseSpec = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: this.options.leaseSeconds,
      renewTime: now,
    };
    try {
      await this.cluster.patch('Lease', this.options.namespace, this.leaseName, { spec });
    } catch (err) {
      if (!(err instanceof CorralError && err.code === 'NOT_FOUND')) throw err;
      const lease = leaseObject(this.leaseName, this.options.namespace, { ...spec, acquireTime: now });
      lease.metadata.labels = { ...lease.metadata.labels, [REPLICA_LABEL]: 'true' };
      try {
        await this.cluster.create('Lease', lease);
      } catch (createErr) {
        if (!(createErr instanceof CorralError && createErr.code === 'NOT_FOUND')) throw createErr;
        // A fresh cluster: Corral's namespace (which also holds the journal and pools) does not exist yet.
        await this.cluster
          .create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.options.namespace } })
          .catch((nsErr: unknown) => {
            if (!isConflict(nsErr)) throw nsErr;
          });
        await this.cluster.create('Lease', lease);
      }
    }
  }
}

function leaseObject(name: string, namespace: string, spec: LeaseSpec): KObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'corral' } },
    spec: spec as Record<string, unknown>,
  };
}
