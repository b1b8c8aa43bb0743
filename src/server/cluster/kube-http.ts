/**
 * One raw JSON request to the apiserver, authenticated by client-node's own KubeConfig (token, client certs, exec
 * plugins, TLS dispatcher) and sent through client-node's fetch library. Raw because (1) KubeVirt subresources have
 * no typed method, (2) every object stays plain JSON (typed core APIs turn timestamps into Dates, watch events do
 * not — the cache must hold one shape), and (3) each request gets a hard timeout, so an unreachable cluster fails
 * fast instead of hanging a UI request.
 */
import { HttpMethod, IsomorphicFetchHttpLibrary, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fromKubeResponse, fromTransportError } from './errors';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: Method;
  path: string; // absolute API path, may include a query string
  body?: unknown;
  contentType?: string;
  /** What the request does, for error messages ("creating VirtualMachine tailvm/web"). */
  what: string;
  timeoutMs?: number;
}

const library = new IsomorphicFetchHttpLibrary();

export class KubeHttp {
  constructor(
    private readonly kc: KubeConfig,
    private readonly defaultTimeoutMs = 10_000,
  ) {}

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '(no cluster)';
  }

  /** Parsed JSON body (undefined for an empty one). Non-2xx answers throw a mapped CorralError. */
  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const timeoutMs = req.timeoutMs ?? this.defaultTimeoutMs;
    const ctx = new RequestContext(this.server + req.path, HttpMethod[req.method]);
    let status: number;
    let text: string;
    try {
      await this.kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam('Accept', 'application/json');
      if (req.body !== undefined) {
        ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
        ctx.setBody(JSON.stringify(req.body));
      }
      const signal = AbortSignal.timeout(timeoutMs);
      ctx.setSignal(signal);
      const res = await library.send(ctx).toPromise();
      status = res.httpStatusCode;
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
}
