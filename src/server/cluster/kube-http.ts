/**
 * One raw JSON request to the apiserver, authenticated by client-node's own KubeConfig (token, client certs, exec
 * plugins, TLS dispatcher) and sent through client-node's fetch library. Raw because (1) KubeVirt subresources have
 * no typed method, (2) every object stays plain JSON (typed core APIs turn timestamps into Dates, watch events do
 * not — the cache must hold one shape), and (3) each request gets a hard timeout, so an unreachable cluster fails
 * fast instead of hanging a UI request.
 *
 * Connections: client-node builds a new undici Agent (its own connection pool) for every request whose cluster has
 * TLS settings — including `insecure-skip-tls-verify` — and never closes it; each such pool keeps its idle socket
 * for as long as the apiserver's keep-alive hint (65 s on the embedded cluster). Under a retry loop that was the
 * file-descriptor climb of issue 14. KubeHttp therefore keeps the first dispatcher it is given and sends every
 * request through that one pool, and `close()` destroys it.
 *
 * Rate: every request and every watch first takes a token from the cluster's one FairRateLimiter (rate-limiter.ts),
 * queued as the calling user's; the request's own time-out starts once it holds the token.
 */
import { HttpMethod, IsomorphicFetchHttpLibrary, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fromKubeResponse, fromTransportError } from './errors';
import { DEFAULT_RATE_LIMIT, FairRateLimiter, type RateLimit } from './rate-limiter';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: Method;
  path: string; // absolute API path, may include a query string
  body?: unknown;
  contentType?: string;
  /** What the request does, for error messages ("creating VirtualMachine tailvm/web"). */
  what: string;
  timeoutMs?: number;
  /** Aborts the request early (its socket is destroyed), besides the time-out. */
  signal?: AbortSignal;
  /** Sees the answer's headers (lower-case names) before its body is parsed. */
  onHeaders?: (headers: Record<string, string>) => void;
}

/** An open streaming response (a watch): the caller reads `body` and aborts its signal when done with it. */
export interface KubeStream {
  status: number;
  body: ReadableStream<Uint8Array> | null;
}

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

const library = new IsomorphicFetchHttpLibrary();

export class KubeHttp {
  /** The one connection pool for this cluster (undefined: undici's global pool, used for plain http). */
  private dispatcher: Dispatcher | undefined;
  private closed = false;
  /** Shared by every request to this cluster: the apiserver sees at most `qps` a second (after `burst`). */
  readonly limiter: FairRateLimiter;

  constructor(
    private readonly kc: KubeConfig,
    private readonly defaultTimeoutMs = 10_000,
    rateLimit: RateLimit | FairRateLimiter = DEFAULT_RATE_LIMIT,
  ) {
    this.limiter = rateLimit instanceof FairRateLimiter ? rateLimit : new FairRateLimiter(rateLimit);
  }

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '(no cluster)';
  }

  /** Parsed JSON body (undefined for an empty one). Non-2xx answers throw a mapped CorralError. */
  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const timeoutMs = req.timeoutMs ?? this.defaultTimeoutMs;
    await this.limiter.acquire(undefined, req.signal);
    let status: number;
    let text: string;
    try {
      const ctx = await this.context(req.method, req.path);
      ctx.setHeaderParam('Accept', 'application/json');
      if (req.body !== undefined) {
        ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
        ctx.setBody(JSON.stringify(req.body));
      }
      // The signal covers the body too: a server that sends headers and then stalls is cut off as well, and an
      // aborted request's socket is destroyed by undici rather than left open.
      const timeout = AbortSignal.timeout(timeoutMs);
      ctx.setSignal(req.signal ? AbortSignal.any([timeout, req.signal]) : timeout);
      const res = await library.send(ctx).toPromise();
      status = res.httpStatusCode;
      req.onHeaders?.(res.headers);
      text = await res.body.text();
    } catch (err) {
      throw fromTransportError(err, req.what, this.server, timeoutMs);
    }
    if (status < 200 || status >= 300) throw fromKubeResponse(status, text, req.what);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // Subresources may answer 200 with a text body; callers of those do not read it.
      return text as T;
    }
  }

  /**
   * A GET whose body is read as a stream (watches). Resolves when the response headers arrive; `signal` aborts
   * the request at any point (connect, headers or body), which destroys its socket. Transport failures throw a
   * mapped CorralError; HTTP errors are returned with their status for the caller to read.
   */
  async stream(path: string, signal: AbortSignal, what: string): Promise<KubeStream> {
    await this.limiter.acquire(undefined, signal);
    try {
      const ctx = await this.context('GET', path);
      ctx.setHeaderParam('Accept', 'application/json');
      ctx.setSignal(signal);
      const res = await library.send(ctx).toPromise();
      return { status: res.httpStatusCode, body: (res.body.stream() as ReadableStream<Uint8Array> | null) ?? null };
    } catch (err) {
      throw fromTransportError(err, what, this.server, 0);
    }
  }

  /** Closes the connection pool (open requests are aborted). Later requests fail. */
  async close(): Promise<void> {
    this.closed = true;
    this.limiter.close();
    const d = this.dispatcher;
    this.dispatcher = undefined;
    if (d) await d.destroy().catch(() => undefined);
  }

  private async context(method: Method, path: string): Promise<RequestContext> {
    if (this.closed) throw new Error('the cluster connection is closed');
    const ctx = new RequestContext(this.server + path, HttpMethod[method]);
    await this.kc.applySecurityAuthentication(ctx);
    const fresh = ctx.getDispatcher();
    if (fresh) {
      // Same cluster and user every time, so the same TLS settings: reuse the first pool (see the header).
      this.dispatcher ??= fresh;
      if (fresh !== this.dispatcher) void fresh.close().catch(() => undefined);
      ctx.setDispatcher(this.dispatcher);
    }
    return ctx;
  }
}
