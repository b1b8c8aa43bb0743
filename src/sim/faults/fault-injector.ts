/**
 * Runtime fault injection for reliability tests: fail or slow down a fraction of API requests, slow down reads
 * (lists and gets, not watches), drop every open watch stream, compact the watch history (so watches resuming
 * from an older resourceVersion answer 410 Expired), or stop answering altogether. Driven in-process (the object returned by startEmbeddedCluster) or
 * over HTTP (`/_sim/faults`, see src/sim/http/control.ts). The control paths themselves are never faulted.
 */
import { ApiError } from '../store/errors.js';

export type Unresponsive = 'no' | 'hang' | 'refuse';

export interface FaultConfig {
  /** Share of requests (0..1) answered with `failStatus` instead of being served. */
  failFraction: number;
  failStatus: number;
  /** Share of requests (0..1) held back for `delayMs` before being served. */
  delayFraction: number;
  delayMs: number;
  /** Every read (a GET that is not a watch: lists, gets, watch-lists) is held back this long (ms) before being served. */
  listDelayMs: number;
  /** `hang`: accept requests and never answer; `refuse`: reset the connection at once. */
  unresponsive: Unresponsive;
  /** Only requests whose path starts with this are affected (empty: all API requests). */
  pathPrefix: string;
}

export const NO_FAULTS: FaultConfig = {
  failFraction: 0,
  failStatus: 503,
  delayFraction: 0,
  delayMs: 0,
  listDelayMs: 0,
  unresponsive: 'no',
  pathPrefix: '',
};

/** What the server does with one request. */
/** What the server knows of a request when it asks for a decision (the path alone for older callers). */
export interface FaultRequest {
  method?: string;
  query?: URLSearchParams;
}

export type FaultDecision =
  | { action: 'serve'; delayMs: number }
  | { action: 'fail'; delayMs: number; error: ApiError }
  | { action: 'hang' }
  | { action: 'refuse' };

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function faultError(status: number): ApiError {
  if (status === 503)
    return new ApiError(
      503,
      'ServiceUnavailable',
      'the server is currently unable to handle the request (injected fault)',
    );
  if (status === 429)
    return new ApiError(
      429,
      'TooManyRequests',
      'the server has received too many requests and has asked us to try again later (injected fault)',
      { causes: [] },
    );
  if (status === 504)
    return new ApiError(
      504,
      'Timeout',
      'the server was unable to return a response in the time allotted, but may still be processing the request (injected fault)',
    );
  return new ApiError(
    status,
    REASONS[status] ?? 'InternalError',
    `Internal error occurred: injected fault (${status})`,
  );
}

export function validateFaultConfig(input: Partial<FaultConfig>): FaultConfig {
  const merged = { ...NO_FAULTS, ...input };
  const fraction = (name: string, v: unknown) => {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      throw new ApiError(400, 'BadRequest', `${name} must be a number between 0 and 1`);
  };
  fraction('failFraction', merged.failFraction);
  fraction('delayFraction', merged.delayFraction);
  if (!Number.isInteger(merged.failStatus) || merged.failStatus < 400 || merged.failStatus > 599) {
    throw new ApiError(400, 'BadRequest', 'failStatus must be an HTTP error status (400-599)');
  }
  if (typeof merged.delayMs !== 'number' || !(merged.delayMs >= 0 && merged.delayMs <= 600_000)) {
    throw new ApiError(400, 'BadRequest', 'delayMs must be a number of milliseconds between 0 and 600000');
  }
  if (typeof merged.listDelayMs !== 'number' || !(merged.listDelayMs >= 0 && merged.listDelayMs <= 600_000)) {
    throw new ApiError(400, 'BadRequest', 'listDelayMs must be a number of milliseconds between 0 and 600000');
  }
  if (!['no', 'hang', 'refuse'].includes(merged.unresponsive))
    throw new ApiError(400, 'BadRequest', 'unresponsive must be "no", "hang" or "refuse"');
  if (typeof merged.pathPrefix !== 'string') throw new ApiError(400, 'BadRequest', 'pathPrefix must be a string');
  const known = new Set(Object.keys(NO_FAULTS));
  for (const k of Object.keys(input))
    if (!known.has(k)) throw new ApiError(400, 'BadRequest', `unknown fault setting "${k}"`);
  return merged;
}

export class FaultInjector {
  private config: FaultConfig = { ...NO_FAULTS };
  private dropper: () => number = () => 0;
  private compactor: () => void = () => {};
  /** Random source; tests may replace it for determinism. */
  random: () => number = Math.random;

  /** Replace the whole configuration (unspecified settings return to "no fault"). */
  set(config: Partial<FaultConfig>): FaultConfig {
    this.config = validateFaultConfig(config);
    return this.get();
  }

  /** Change some settings, keeping the others. */
  update(config: Partial<FaultConfig>): FaultConfig {
    const { ...current } = this.config;
    this.config = validateFaultConfig({ ...current, ...config });
    return this.get();
  }

  get(): FaultConfig {
    return { ...this.config };
  }

  clear(): void {
    this.config = { ...NO_FAULTS };
  }

  failRequests(fraction: number, status = 503): void {
    this.update({ failFraction: fraction, failStatus: status });
  }

  slowRequests(fraction: number, delayMs: number): void {
    this.update({ delayFraction: fraction, delayMs });
  }

  stopAnswering(mode: 'hang' | 'refuse' = 'hang'): void {
    this.update({ unresponsive: mode });
  }

  resumeAnswering(): void {
    this.update({ unresponsive: 'no' });
  }

  /** End every open watch stream now (clients see a clean end of stream and re-watch). Returns how many. */
  dropWatches(): number {
    return this.dropper();
  }

  /** Hold every read (list, get or watch-list, not a plain watch) back for `delayMs`: a slow apiserver or etcd. */
  slowLists(delayMs: number): void {
    this.update({ listDelayMs: delayMs });
  }

  /**
   * Compact the history, as etcd compaction does (the store forgets its event logs), and end every open watch
   * stream: a client resuming from a resourceVersion older than the newest gets `ERROR 410 Expired` and must
   * list again. Returns how many watches were dropped.
   */
  expireWatches(): number {
    this.compactor();
    return this.dropper();
  }

  /** Wired by the HTTP server. */
  attachWatchDropper(drop: () => number): void {
    this.dropper = drop;
  }

  /** Wired by the HTTP server: forget the store's event logs. */
  attachLogCompactor(compact: () => void): void {
    this.compactor = compact;
  }

  decide(path: string, request: FaultRequest = {}): FaultDecision {
    const c = this.config;
    if (c.pathPrefix && !path.startsWith(c.pathPrefix)) return { action: 'serve', delayMs: 0 };
    if (c.unresponsive === 'hang') return { action: 'hang' };
    if (c.unresponsive === 'refuse') return { action: 'refuse' };
    // A watch-list (`sendInitialEvents=true`) reads the whole collection first: it is a list too.
    const isRead =
      (request.method ?? 'GET') === 'GET' &&
      ((request.query?.get('watch') !== 'true' && !path.includes('/watch/')) ||
        request.query?.get('sendInitialEvents') === 'true');
    const listDelay = c.listDelayMs > 0 && isRead ? c.listDelayMs : 0;
    const delayMs = Math.max(listDelay, c.delayFraction > 0 && this.random() < c.delayFraction ? c.delayMs : 0);
    if (c.failFraction > 0 && this.random() < c.failFraction)
      return { action: 'fail', delayMs, error: faultError(c.failStatus) };
    return { action: 'serve', delayMs };
  }
}
