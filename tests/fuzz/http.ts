/**
 * The fuzz suites' HTTP client: node:http (not fetch) so paths go out byte for byte — `..`, `%2e%2e`, `%2F` and
 * `%00` are not normalised away — and bodies, content types and methods can be anything.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

export interface FuzzCase {
  /** Position in the run (with the seed, enough to replay it). */
  id: number;
  suite: 'api' | 'proxmox';
  method: string;
  /** Raw request target, sent as is (already percent-encoded where needed). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The route template the case was generated from, e.g. `POST /vms/{namespace}/{name}/tags`. */
  route: string;
  /** What was done to the request, e.g. `body.cpu = "2" (integer as string)`. */
  label: string;
  /** Invalid by construction (or aimed at an object that does not exist): anything but 4xx is a failure. */
  mustRefuse: boolean;
  /** The request is refused only under the strict-input rules of issue 14 (today's schema lets it through). */
  strictRule?: boolean;
  /** An unknown field the 400 message must name. */
  mustName?: string;
  /** Sent on its own connection (an oversized body: the server may close the socket after its 413). */
  freshConnection?: boolean;
}

export interface FuzzReply {
  status: number;
  reason: string;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, when it is JSON. */
  json?: unknown;
  isJson: boolean;
  /** No answer at all (connection reset, time-out). */
  networkError?: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function closeAgent(): void {
  agent.destroy();
}

export function send(base: string, c: FuzzCase, timeoutMs = 10_000): Promise<FuzzReply> {
  const url = new URL(base);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: FuzzReply) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const headers: Record<string, string | number> = { ...c.headers };
    if (c.body !== undefined) headers['content-length'] = Buffer.byteLength(c.body);
    let req;
    try {
      req = request(
        {
          agent: c.freshConnection ? false : agent,
          host: url.hostname,
          port: url.port,
          method: c.method,
          path: c.path,
          headers,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('error', (err) =>
            done({
              status: res.statusCode ?? 0,
              reason: '',
              headers: res.headers,
              text: '',
              isJson: false,
              networkError: err.message,
            }),
          );
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            let isJson: boolean;
            try {
              json = JSON.parse(text);
              isJson = true;
            } catch {
              isJson = false;
            }
            done({
              status: res.statusCode ?? 0,
              reason: res.statusMessage ?? '',
              headers: res.headers,
              text,
              ...(isJson ? { json } : {}),
              isJson,
            });
          });
        },
      );
    } catch (err) {
      // The client itself refused to send it (e.g. an invalid header): a generator bug, reported as such.
      done({
        status: 0,
        reason: '',
        headers: {},
        text: '',
        isJson: false,
        networkError: `client: ${(err as Error).message}`,
      });
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) =>
      done({ status: 0, reason: '', headers: {}, text: '', isJson: false, networkError: err.message }),
    );
    if (c.body !== undefined) req.end(c.body);
    else req.end();
  });
}

/** One line that identifies a request well enough to replay it with curl. */
export function describeCase(c: FuzzCase, max = 240): string {
  const ct = c.headers['content-type'] ? ` [${c.headers['content-type']}]` : '';
  const auth = c.headers.authorization ? ` [auth ${c.headers.authorization.slice(0, 40)}]` : '';
  const extra = Object.entries(c.headers)
    .filter(([k]) => k !== 'content-type' && k !== 'authorization')
    .map(([k, v]) => ` [${k}: ${v.slice(0, 40)}]`)
    .join('');
  const body = c.body === undefined ? '' : ` body=${clip(JSON.stringify(c.body), max)}`;
  return `#${c.id} ${c.method} ${clip(c.path, max)}${ct}${auth}${extra}${body}`;
}

export function describeReply(r: FuzzReply, max = 200): string {
  if (r.networkError) return `no answer (${r.networkError})`;
  return `${r.status} ${r.reason} ${clip(r.text, max)}`;
}

export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…(${s.length} chars)`;
}
