/**
 * One client-side rate limiter per cluster, shared by every request Corral sends it (KubeHttp takes a token before
 * each request and each watch it opens), so a bulk start of 1,000 VMs or a script hammering the REST API cannot
 * flood the apiserver. A token bucket like client-go's flowcontrol limiter — `qps` tokens a second, at most `burst`
 * saved up — with one difference: waiting requests queue per user and are served round-robin, one per user per
 * turn, so one user's 1,000-VM bulk action delays another user's single click by at most one token, not 1,000.
 *
 * Who is asking comes from the async context (`asKubeCaller`, set by the tRPC middleware for each procedure call
 * and inherited by the tasks it starts); requests outside any caller's context (the watch cache, the metrics
 * sampler, the Proxmox translator today) queue as `SYSTEM_CALLER`.
 *
 * Defaults: 50 QPS, burst 100 (client-go's 5/10 is sized for one controller; kubectl uses 50/300). Configure with
 * `--kube-qps`/`--kube-burst` or CORRAL_KUBE_QPS/CORRAL_KUBE_BURST; qps 0 switches the limiter off.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { CorralError } from '../errors';

export interface RateLimit {
  /** Sustained requests per second; 0 = unlimited. */
  qps: number;
  /** Requests allowed at once after a quiet spell (the bucket's size). */
  burst: number;
}

export const DEFAULT_RATE_LIMIT: RateLimit = { qps: 50, burst: 100 };
export const SYSTEM_CALLER = '(corral)';

const callers = new AsyncLocalStorage<string>();

/** Runs `fn` with cluster requests queued as `login`'s (and everything it starts asynchronously, too). */
export function asKubeCaller<T>(login: string, fn: () => T): T {
  return callers.run(login, fn);
}

export function currentKubeCaller(): string {
  return callers.getStore() ?? SYSTEM_CALLER;
}

/** `qps`/`burst` from flags or the environment, validated: a bad value is an error naming the setting. */
export function parseRateLimit(
  values: { qps?: string | undefined; burst?: string | undefined },
  names = { qps: 'CORRAL_KUBE_QPS', burst: 'CORRAL_KUBE_BURST' },
): RateLimit {
  const read = (raw: string | undefined, name: string, fallback: number, min: number) => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(n) || n < min || n > 100_000)
      throw new Error(`${name} must be a number between ${min} and 100000 (got "${raw}")`);
    return n;
  };
  const qps = read(values.qps, names.qps, DEFAULT_RATE_LIMIT.qps, 0);
  const burst = read(values.burst, names.burst, Math.max(DEFAULT_RATE_LIMIT.burst, Math.ceil(qps)), 1);
  return { qps, burst: Math.floor(burst) };
}

export interface LimiterClock {
  now(): number; // milliseconds, monotonic
  setTimeout(fn: () => void, ms: number): { unref?: () => void };
}

const realClock: LimiterClock = { now: () => performance.now(), setTimeout: (fn, ms) => setTimeout(fn, ms) };

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export interface LimiterStats {
  qps: number;
  burst: number;
  /** Tokens handed out since start. */
  granted: number;
  /** Requests waiting now, all users together. */
  waiting: number;
  /** Users with requests waiting now. */
  waitingUsers: number;
}

export class FairRateLimiter {
  private tokens: number;
  private last: number;
  /** Per-user FIFO queues; Map order is the round-robin order (a served user moves to the back). */
  private readonly queues = new Map<string, Waiter[]>();
  private timerArmed = false;
  private granted = 0;
  private closed = false;

  constructor(
    readonly limit: RateLimit = DEFAULT_RATE_LIMIT,
    private readonly clock: LimiterClock = realClock,
  ) {
    this.tokens = limit.burst;
    this.last = clock.now();
  }

  /** Resolves when `user` may send one request. Rejects when `signal` aborts first or the limiter is closed. */
  acquire(user: string = currentKubeCaller(), signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the cluster connection is closed'));
    if (this.limit.qps <= 0) {
      this.granted++;
      return Promise.resolve();
    }
    this.refill();
    if (this.queues.size === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.granted++;
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          this.remove(user, waiter);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      const queue = this.queues.get(user);
      if (queue) queue.push(waiter);
      else this.queues.set(user, [waiter]);
      this.arm();
    });
  }

  stats(): LimiterStats {
    let waiting = 0;
    for (const q of this.queues.values()) waiting += q.length;
    return { ...this.limit, granted: this.granted, waiting, waitingUsers: this.queues.size };
  }

  /** Fails every waiting request; later ones fail at once. */
  close(): void {
    this.closed = true;
    for (const queue of this.queues.values())
      for (const w of queue) {
        if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
        w.reject(new Error('the cluster connection is closed'));
      }
    this.queues.clear();
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.last) / 1000) * this.limit.qps);
    this.last = now;
  }

  private arm(): void {
    if (this.timerArmed || this.queues.size === 0) return;
    this.timerArmed = true;
    const wait = Math.max(0, ((1 - this.tokens) / this.limit.qps) * 1000);
    const timer = this.clock.setTimeout(() => {
      this.timerArmed = false;
      this.drain();
    }, Math.ceil(wait));
    timer.unref?.();
  }

  private drain(): void {
    this.refill();
    while (this.tokens >= 1 && this.queues.size > 0) {
      const [user, queue] = this.queues.entries().next().value as [string, Waiter[]];
      const waiter = queue.shift() as Waiter;
      // Round-robin: the user just served goes to the back of the line (or leaves it when nothing else waits).
      this.queues.delete(user);
      if (queue.length > 0) this.queues.set(user, queue);
      this.tokens -= 1;
      this.granted++;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    this.arm();
  }

  private remove(user: string, waiter: Waiter): void {
    const queue = this.queues.get(user);
    if (!queue) return;
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.queues.delete(user);
  }
}

/** The abort's own reason (a CorralError saying why, or the DOMException of an AbortSignal.timeout). */
function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new CorralError('UNAVAILABLE', 'cancelled while waiting for the cluster rate limiter');
}
