/**
 * Test harness: the embedded cluster and Corral (API only, no Next, no plug-ins) in this process, both on random
 * loopback ports, plus small HTTP helpers that return status + parsed body.
 */
import { startEmbeddedCluster, type EmbeddedCluster, type FleetName } from '@/sim/index';
import { startCorral, type RunningCorral, type StartOptions } from '@/server/start';

export interface Harness {
  sim: EmbeddedCluster;
  corral: RunningCorral;
  url: string;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  del(path: string, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

/** Status, text and JSON-parsed body (the text when it is not JSON) of a response. */
export async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** get/post/del that return replies, against a base URL read at each call (a server started later, in beforeAll). */
export function httpClient(base: () => string): Pick<Harness, 'get' | 'post' | 'del'> {
  return {
    get: async (path, headers = {}) => reply(await fetch(base() + path, { headers })),
    post: async (path, body, headers = {}) =>
      reply(
        await fetch(base() + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      ),
    del: async (path, headers = {}) => reply(await fetch(base() + path, { method: 'DELETE', headers })),
  };
}

export async function startHarness(
  options: {
    fleet?: FleetName;
    speed?: number;
    requestTimeoutMs?: number;
    unreachableAfterMs?: number;
    /** More startCorral options (limits, open, host, the cluster rate limit). */
    corral?: Pick<StartOptions, 'limits' | 'open' | 'host' | 'kubeRateLimit'>;
  } = {},
): Promise<Harness> {
  const sim = await startEmbeddedCluster({ port: 0, fleet: options.fleet ?? 'empty', speed: options.speed ?? 50 });
  const corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: options.requestTimeoutMs ?? 2000,
    unreachableAfterMs: options.unreachableAfterMs,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
    ...options.corral,
  });
  await corral.cluster.cache.waitForSync(20_000);
  const url = corral.url;
  return {
    sim,
    corral,
    url,
    ...httpClient(() => url),
    async close() {
      await corral.close();
      await sim.close();
    },
  };
}

/** Polls `probe` until it returns a truthy value (or throws after `timeoutMs`). */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A task as `GET /api/tasks/{id}` answers it (the fields tests read). */
export interface TaskReply {
  status: string;
  progress: number;
  error: string;
  log: string;
}

/** Waits until task `id` is no longer running and returns it, whether it ended `done` or `error`. */
export function taskEnd(h: Pick<Harness, 'get'>, id: string, timeoutMs = 30_000): Promise<TaskReply> {
  return eventually(
    async () => {
      const t = (await h.get(`/api/tasks/${id}`)).body as TaskReply;
      return t.status === 'running' ? undefined : t;
    },
    timeoutMs,
    `task ${id}`,
  );
}

/** Waits for task `id` and fails with its error and log unless it ended `done`. */
export async function taskDone(h: Pick<Harness, 'get'>, id: string, timeoutMs = 30_000): Promise<TaskReply> {
  const t = await taskEnd(h, id, timeoutMs);
  if (t.status !== 'done') throw new Error(`task ${id} ended ${t.status}: ${t.error}\n${t.log}`);
  return t;
}

/**
 * Reads a tRPC SSE stream (superjson) until it ends, calling `onEvent` for every tracked event (`id:` + `data:`).
 * Resolves when the stream ends or is aborted.
 */
export async function readTrackedEvents<T>(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  onEvent: (id: string, data: T) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    buffered += value;
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const id = /^id: ?(.*)$/m.exec(frame)?.[1];
      const data = /^data: ?(.*)$/m.exec(frame)?.[1];
      if (id && data) onEvent(id, (JSON.parse(data) as { json: T }).json);
    }
  }
}

/**
 * Makes an embedded cluster take every request whose path starts with `prefix` and never answer (a hung upload
 * proxy, say). `reached()` tells whether one has come; `release()` clears the faults and stops watching.
 */
export function hangRequests(
  faults: EmbeddedCluster['faults'],
  prefix: string,
): { reached: () => boolean; release: () => void } {
  let reached = false;
  const decide = faults.decide.bind(faults);
  faults.decide = (path, request) => {
    if (path.startsWith(prefix)) reached = true;
    return decide(path, request);
  };
  faults.set({ unresponsive: 'hang', pathPrefix: prefix });
  return {
    reached: () => reached,
    release: () => {
      faults.clear();
      faults.decide = decide;
    },
  };
}
