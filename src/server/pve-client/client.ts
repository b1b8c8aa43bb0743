/**
 * A small client of a Proxmox VE host's API (`/api2/json`), for exactly what a move to PVE needs (the domain's
 * PveHost, domain/move-pve-port.ts). Token auth only (`Authorization: PVEAPIToken=user@realm!id=secret`), form
 * bodies like PVE's own tools, PVE's `{data}` envelope. The disk upload is a multipart body assembled around the
 * image stream with its exact length, so gigabytes pass through with backpressure and nothing is buffered. A
 * custom CA (`ca`) or `insecure` (no certificate check: self-signed PVE hosts) applies to every request.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PveFailure, type PveGuestRow, type PveHost, type PveHosts, type PveStorageRow } from '../domain/move-pve-port';

export interface PveHostConfig {
  name: string;
  /** Base URL, e.g. `https://pve1:8006` (the `/api2/json` prefix is added). */
  url: string;
  /** `user@realm!tokenid=secret`. */
  token: string;
  /** PEM CA that signed the host's certificate. */
  ca?: string;
  /** Skip the certificate check (a self-signed host without its CA). */
  insecure?: boolean;
  /** Per request, except uploads (default 30 s). */
  timeoutMs?: number;
  /** Between task status polls (default 500 ms). */
  pollMs?: number;
}

interface Answer {
  status: number;
  text: string;
}

const enc = encodeURIComponent;

function failureOf(method: string, path: string, answer: Answer): PveFailure {
  let message = answer.text.trim().slice(0, 500);
  try {
    const body = JSON.parse(answer.text) as { message?: string; errors?: Record<string, string> };
    const errors = body.errors ? Object.entries(body.errors).map(([k, v]) => `${k}: ${v}`) : [];
    message = [body.message?.trim(), ...errors].filter(Boolean).join('; ') || message;
  } catch {
    // not JSON: the text as it came
  }
  const kind = answer.status === 401 || answer.status === 403 ? 'unauthorized' : 'refused';
  return new PveFailure(kind, answer.status, `${method} ${path}: ${answer.status} ${message}`);
}

export class PveClient implements PveHost {
  readonly name: string;
  readonly url: string;
  private readonly base: URL;
  private readonly agent: http.Agent;

  constructor(private readonly config: PveHostConfig) {
    this.name = config.name;
    this.url = config.url.replace(/\/+$/, '');
    this.base = new URL(`${this.url}/api2/json/`);
    this.agent =
      this.base.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            ...(config.ca ? { ca: config.ca } : {}),
            ...(config.insecure ? { rejectUnauthorized: false } : {}),
          })
        : new http.Agent({ keepAlive: true });
  }

  close(): void {
    this.agent.destroy();
  }

  /** One request; resolves with the status and body text whatever the status, rejects only when unreachable. */
  private send(
    method: string,
    path: string,
    options: {
      headers?: Record<string, string>;
      body?: Buffer | Readable;
      timeoutMs?: number;
      signal?: AbortSignal;
    } = {},
  ): Promise<Answer> {
    const url = new URL(path.replace(/^\//, ''), this.base);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Answer>((resolve, reject) => {
      const req = client.request(url, {
        method,
        agent: this.agent,
        ...(options.signal ? { signal: options.signal } : {}),
        headers: {
          authorization: `PVEAPIToken=${this.config.token}`,
          accept: 'application/json',
          ...options.headers,
          ...(Buffer.isBuffer(options.body) ? { 'content-length': String(options.body.length) } : {}),
        },
      });
      const timeoutMs = options.timeoutMs ?? this.config.timeoutMs ?? 30_000;
      if (timeoutMs > 0)
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)}s`)));
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (chunks.length < 256) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (err) =>
        reject(
          options.signal?.aborted
            ? options.signal.reason
            : new PveFailure('unreachable', 0, `${this.name} (${this.url}) does not answer: ${err.message}`),
        ),
      );
      if (options.body instanceof Readable) pipeline(options.body, req).catch((err: Error) => req.destroy(err));
      else req.end(options.body);
    });
  }

  private async call<T>(method: string, path: string, params?: Record<string, string | number>): Promise<T> {
    const form = params
      ? new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()
      : undefined;
    const query = method === 'GET' || method === 'DELETE';
    const target = query && form ? `${path}?${form}` : path;
    const answer = await this.send(
      method,
      target,
      !query && form
        ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(form) }
        : {},
    );
    if (answer.status < 200 || answer.status >= 300) throw failureOf(method, path, answer);
    try {
      return (JSON.parse(answer.text) as { data: T }).data;
    } catch {
      throw new PveFailure('refused', answer.status, `${method} ${path}: the answer is not PVE's JSON envelope`);
    }
  }

  async version(): Promise<{ version: string; release: string }> {
    const v = await this.call<{ version?: string; release?: string }>('GET', '/version');
    return { version: String(v.version ?? ''), release: String(v.release ?? '') };
  }

  async nodes(): Promise<{ node: string; online: boolean }[]> {
    const rows = await this.call<{ node: string; status?: string }[]>('GET', '/nodes');
    return rows.map((r) => ({ node: r.node, online: r.status === 'online' }));
  }

  async storages(node: string): Promise<PveStorageRow[]> {
    const rows = await this.call<
      { storage: string; content?: string; type?: string; active?: number; enabled?: number; avail?: number }[]
    >('GET', `/nodes/${enc(node)}/storage`);
    return rows.map((r) => ({
      storage: r.storage,
      content: (r.content ?? '').split(',').filter(Boolean),
      type: r.type ?? '',
      active: r.active !== 0 && r.enabled !== 0,
      ...(typeof r.avail === 'number' ? { avail: r.avail } : {}),
    }));
  }

  async guests(): Promise<PveGuestRow[]> {
    const rows = await this.call<{ vmid?: number | string; name?: string; node?: string; type?: string }[]>(
      'GET',
      '/cluster/resources',
      { type: 'vm' },
    );
    return rows
      .filter((r) => r.vmid !== undefined)
      .map((r) => ({ vmid: Number(r.vmid), name: r.name ?? '', node: r.node ?? '', type: r.type ?? 'qemu' }));
  }

  async nextId(): Promise<number> {
    const id = Number(await this.call<string | number>('GET', '/cluster/nextid'));
    if (!Number.isSafeInteger(id) || id < 100)
      throw new PveFailure('refused', 200, `${this.name}: /cluster/nextid answered no vmid`);
    return id;
  }

  async upload(
    node: string,
    storage: string,
    content: 'import' | 'iso',
    filename: string,
    body: Readable,
    bytes: number,
    signal?: AbortSignal,
  ): Promise<string> {
    const boundary = `----corral-${randomBytes(12).toString('hex')}`;
    const quoted = filename.replace(/["\\\r\n]/g, '_');
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\n${content}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="filename"; filename="${quoted}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    async function* parts() {
      yield head;
      let seen = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        seen += chunk.length;
        yield chunk;
      }
      if (seen !== bytes) throw new Error(`the image had ${seen} bytes, ${bytes} were announced`);
      yield tail;
    }
    const path = `/nodes/${enc(node)}/storage/${enc(storage)}/upload`;
    const answer = await this.send('POST', path, {
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + bytes + tail.length),
      },
      body: Readable.from(parts()),
      timeoutMs: 0,
      ...(signal ? { signal } : {}),
    });
    if (answer.status < 200 || answer.status >= 300) throw failureOf('POST', path, answer);
    return String((JSON.parse(answer.text) as { data: unknown }).data ?? '');
  }

  async createVm(node: string, params: Record<string, string | number>): Promise<string> {
    return String(await this.call<string>('POST', `/nodes/${enc(node)}/qemu`, params));
  }

  async waitTask(node: string, upid: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const path = `/nodes/${enc(node)}/tasks/${enc(upid)}/status`;
    for (;;) {
      const s = await this.call<{ status?: string; exitstatus?: string }>('GET', path);
      if (s.status === 'stopped') {
        if (s.exitstatus === 'OK') return;
        throw new PveFailure('refused', 200, `task ${upid} on ${this.name} ended: ${s.exitstatus ?? 'unknown'}`);
      }
      if (Date.now() > deadline)
        throw new PveFailure(
          'refused',
          200,
          `task ${upid} on ${this.name} still runs after ${Math.round(timeoutMs / 1000)}s`,
        );
      await new Promise((r) => setTimeout(r, this.config.pollMs ?? 500));
    }
  }

  async startVm(node: string, vmid: number): Promise<string> {
    return String(await this.call<string>('POST', `/nodes/${enc(node)}/qemu/${vmid}/status/start`));
  }

  async deleteVm(node: string, vmid: number): Promise<string> {
    return String(
      await this.call<string>('DELETE', `/nodes/${enc(node)}/qemu/${vmid}`, {
        purge: 1,
        'destroy-unreferenced-disks': 1,
      }),
    );
  }

  async deleteVolume(node: string, storage: string, volid: string): Promise<string> {
    const data = await this.call<unknown>(
      'DELETE',
      `/nodes/${enc(node)}/storage/${enc(storage)}/content/${enc(volid)}`,
    );
    return typeof data === 'string' ? data : '';
  }
}

/** The configured hosts by name. */
export class PveClients implements PveHosts {
  private readonly hosts: PveClient[];
  constructor(configs: PveHostConfig[]) {
    this.hosts = configs.map((c) => new PveClient(c));
  }
  all(): PveClient[] {
    return this.hosts;
  }
  get(name: string): PveClient | undefined {
    return this.hosts.find((h) => h.name === name);
  }
  close(): void {
    for (const h of this.hosts) h.close();
  }
}
