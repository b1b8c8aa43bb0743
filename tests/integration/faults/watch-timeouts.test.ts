/**
 * The watch loop's time-outs and back-off against a scripted apiserver (the embedded cluster cannot make an open
 * stream go silent): a stream that stays silent past its timeoutSeconds is aborted and its socket closed, a watch
 * request that gets no response headers is given up on, an in-stream ERROR 410 makes the kind list again, and
 * repeated failures back off exponentially (with jitter) instead of retrying once a second.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeHttp } from '@/server/cluster/kube-http';
import { RESOURCES, resourcePath } from '@/server/cluster/resources';
import { WatchCache, type WatchCacheOptions } from '@/server/cluster/watch-cache';
import { eventually } from '../server/harness';

type WatchMode = 'stream' | 'silent' | 'no-answer' | 'error-410' | 'fail-500';

interface WatchRequest {
  at: number;
  query: URLSearchParams;
  closed: boolean;
}

/** A minimal apiserver: empty lists, and watches on VirtualMachines that behave as `mode` says. */
class ScriptedApiserver {
  mode: WatchMode = 'stream';
  readonly vmWatches: WatchRequest[] = [];
  vmLists = 0;
  private readonly server: Server;
  private readonly open = new Set<ServerResponse>();
  private readonly vmPath = resourcePath(RESOURCES.VirtualMachine);

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/version') return void res.end('{"major":"1","minor":"34"}');
    const isVm = url.pathname === this.vmPath;
    if (url.searchParams.get('watch') !== 'true') {
      if (isVm) this.vmLists++;
      res.setHeader('content-type', 'application/json');
      return void res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '10' }, items: [] }));
    }
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const mode: WatchMode = isVm ? this.mode : 'stream';
    if (isVm) {
      const w: WatchRequest = { at: Date.now(), query: url.searchParams, closed: false };
      this.vmWatches.push(w);
      res.on('close', () => (w.closed = true));
    }
    if (mode === 'no-answer') return; // headers never come
    if (mode === 'fail-500') {
      res.statusCode = 500;
      return void res.end('{"kind":"Status","code":500,"message":"injected"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    if (mode === 'error-410') {
      const status = { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' };
      return void res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    }
    if (mode === 'stream') {
      const bookmark = { kind: 'VirtualMachine', metadata: { resourceVersion: '11' } };
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
    }
    // 'silent' (and 'stream' after its bookmark): headers sent, then nothing, the connection kept open.
  }
}

let api: ScriptedApiserver | undefined;
let cache: WatchCache | undefined;
let http: KubeHttp | undefined;
afterEach(async () => {
  await cache?.stop();
  await http?.close();
  await api?.close();
  api = cache = http = undefined;
});

async function start(
  mode: WatchMode,
  options: WatchCacheOptions,
): Promise<{ api: ScriptedApiserver; cache: WatchCache }> {
  api = new ScriptedApiserver();
  api.mode = mode;
  const url = await api.start();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  http = new KubeHttp(kc, 1000);
  cache = new WatchCache(http, { log: () => {}, heartbeatMs: 200, ...options });
  await cache.start();
  return { api, cache };
}

describe('watch time-outs and back-off', () => {
  it('asks for timeoutSeconds and aborts a stream that stays silent past it, closing its socket', async () => {
    const lines: string[] = [];
    const { api } = await start('silent', {
      watchTimeoutSeconds: 1,
      watchIdleSlackMs: 300,
      log: (l) => lines.push(l),
    });
    await eventually(() => api.vmWatches.length >= 1, 3000, 'first watch');
    expect(api.vmWatches[0]!.query.get('timeoutSeconds')).toBe('1');
    expect(api.vmWatches[0]!.query.get('resourceVersion')).toBe('10');
    expect(api.vmWatches[0]!.query.get('allowWatchBookmarks')).toBe('true');
    const opened = api.vmWatches[0]!.at;
    await eventually(() => api.vmWatches[0]!.closed, 4000, 'silent watch aborted');
    const after = Date.now() - opened;
    expect(after).toBeGreaterThanOrEqual(1200);
    expect(after).toBeLessThan(3000);
    await eventually(() => api.vmWatches.length >= 2, 3000, 'a new watch after the abort');
    expect(api.vmWatches[1]!.query.get('resourceVersion')).toBe('10'); // resumed, not relisted
    expect(api.vmLists).toBe(1);
    expect(lines.join('\n')).toMatch(/watch on VirtualMachine failed \(the watch was silent for 1 s\)/);
  });

  it('gives up on a watch request without response headers, backs off, and is not ready past the grace', async () => {
    const { api, cache } = await start('no-answer', {
      watchConnectTimeoutMs: 300,
      minBackoffMs: 100,
      maxBackoffMs: 400,
      unreachableAfterMs: 800,
    });
    await eventually(() => api.vmWatches.length >= 1, 3000, 'first watch');
    await eventually(() => api.vmWatches[0]!.closed, 2000, 'unanswered watch aborted');
    await eventually(() => !cache.ready(), 3000, 'not ready past the grace');
    expect(cache.problems().join()).toMatch(/VirtualMachine: no answer to the watch request within 300 ms/);
    // Every abandoned request was closed: at most the current one is open.
    expect(api.vmWatches.filter((w) => !w.closed).length).toBeLessThanOrEqual(1);
    api.mode = 'stream';
    await eventually(() => cache.ready(), 3000, 'ready once the watch connects');
  });

  it('an in-stream ERROR 410 lists again, then watches from the new list', async () => {
    const { api } = await start('error-410', { minBackoffMs: 100 });
    await eventually(() => api.vmLists >= 2, 3000, 'relist after 410');
    api.mode = 'stream';
    await eventually(() => api.vmWatches.at(-1)?.closed === false, 3000, 'watching again');
    expect(api.vmWatches.at(-1)!.query.get('resourceVersion')).toBe('10');
  });

  it('repeated failures back off exponentially with jitter, up to the maximum', async () => {
    const { api } = await start('fail-500', { minBackoffMs: 100, maxBackoffMs: 800, random: () => 1 });
    await eventually(() => api.vmWatches.length >= 6, 8000, 'six attempts');
    const gaps = api.vmWatches.slice(1, 6).map((w, i) => w.at - api.vmWatches[i]!.at);
    // random() = 1 takes the top of each jitter window [d/2, d]: 100, 200, 400, 800, 800 ms.
    const expected = [100, 200, 400, 800, 800];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i]! - 20);
      expect(gap).toBeLessThan(expected[i]! + 400);
    });
  });
});
