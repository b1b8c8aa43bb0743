/**
 * The watch loop's time-outs and back-off against a scripted apiserver (the embedded cluster cannot make an open
 * stream go silent): a stream that stays silent past its timeoutSeconds is aborted and its socket closed, a watch
 * request that gets no response headers is given up on, an in-stream ERROR 410 makes the kind read its state again,
 * and repeated failures back off exponentially (with jitter) instead of retrying once a second. The initial state
 * is read by watch-list (docs/scale.md "Cold sync"); where the apiserver refuses it, by a list (the fallback).
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

/**
 * A minimal apiserver: empty collections, and watches on VirtualMachines from a resourceVersion that behave as
 * `mode` says. A watch-list on VirtualMachines streams its (empty) initial state, ended by the initial-events-end
 * bookmark at resourceVersion 10; in 'stream' and 'silent' mode the stream then stays open (silent in 'silent'
 * mode), otherwise the apiserver ends it there, so the cache resumes with a watch from 10 that meets `mode`.
 * With `watchList` false, a watch-list is refused (422) as by an apiserver without the WatchList gate.
 */
class ScriptedApiserver {
  mode: WatchMode = 'stream';
  watchList = true;
  readonly vmWatches: WatchRequest[] = [];
  /** Plain lists of VirtualMachines. */
  vmLists = 0;
  /** Watch-lists of VirtualMachines that were served (not refused). */
  vmWatchLists = 0;
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
    const initial = url.searchParams.get('sendInitialEvents') === 'true';
    if (initial && !this.watchList) {
      res.statusCode = 422;
      const message = 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';
      return void res.end(JSON.stringify({ kind: 'Status', code: 422, reason: 'Invalid', message }));
    }
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const mode: WatchMode = isVm ? this.mode : 'stream';
    if (isVm) {
      const w: WatchRequest = { at: Date.now(), query: url.searchParams, closed: false };
      this.vmWatches.push(w);
      res.on('close', () => (w.closed = true));
    }
    if (initial) {
      if (isVm) this.vmWatchLists++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const end = {
        kind: 'VirtualMachine',
        metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } },
      };
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: end })}\n`);
      if (mode !== 'stream' && mode !== 'silent') return void res.end();
      return; // open, and silent from here on ('stream' needs nothing more: the watch-list is the watch)
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
  watchList = true,
): Promise<{ api: ScriptedApiserver; cache: WatchCache }> {
  api = new ScriptedApiserver();
  api.mode = mode;
  api.watchList = watchList;
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
    // The watch-list that read the initial state is the watch: it goes silent after its initial events.
    expect(api.vmWatches[0]!.query.get('sendInitialEvents')).toBe('true');
    expect(api.vmWatches[0]!.query.get('timeoutSeconds')).toBe('1');
    expect(api.vmWatches[0]!.query.get('allowWatchBookmarks')).toBe('true');
    const opened = api.vmWatches[0]!.at;
    await eventually(() => api.vmWatches[0]!.closed, 4000, 'silent watch aborted');
    const after = Date.now() - opened;
    expect(after).toBeGreaterThanOrEqual(1200);
    expect(after).toBeLessThan(3000);
    await eventually(() => api.vmWatches.length >= 2, 3000, 'a new watch after the abort');
    // Resumed from the initial-events-end bookmark's version, not read again.
    expect(api.vmWatches[1]!.query.get('resourceVersion')).toBe('10');
    expect(api.vmWatches[1]!.query.get('sendInitialEvents')).toBeNull();
    expect(api.vmWatches[1]!.query.get('timeoutSeconds')).toBe('1');
    expect(api.vmWatchLists).toBe(1);
    expect(api.vmLists).toBe(0);
    expect(lines.join('\n')).toMatch(/watch on VirtualMachine failed \(the watch was silent for 1 s\)/);
  });

  it('gives up on a watch request without response headers, backs off, and is not ready past the grace', async () => {
    const { api, cache } = await start('no-answer', {
      watchConnectTimeoutMs: 300,
      minBackoffMs: 100,
      maxBackoffMs: 400,
      unreachableAfterMs: 800,
    });
    // The watch-list answers and ends after its initial events; the watch that resumes from it gets no answer.
    await eventually(() => api.vmWatches.length >= 2, 3000, 'first watch from a resourceVersion');
    expect(api.vmWatches[1]!.query.get('resourceVersion')).toBe('10');
    await eventually(() => api.vmWatches[1]!.closed, 2000, 'unanswered watch aborted');
    await eventually(() => !cache.ready(), 3000, 'not ready past the grace');
    expect(cache.problems().join()).toMatch(/VirtualMachine: no answer to the watch request within 300 ms/);
    // Every abandoned request was closed: at most the current one is open.
    expect(api.vmWatches.filter((w) => !w.closed).length).toBeLessThanOrEqual(1);
    api.mode = 'stream';
    await eventually(() => cache.ready(), 3000, 'ready once the watch connects');
    expect(api.vmWatchLists, 'resumed throughout, never read again').toBe(1);
  });

  it('an in-stream ERROR 410 reads the state again by watch-list, which goes on as the watch', async () => {
    // A back-off would wait at least 500 ms here: the new read must not.
    const { api } = await start('error-410', { minBackoffMs: 1000 });
    await eventually(() => api.vmWatchLists >= 2, 3000, 'watch-list again after 410');
    // The watch from 10 met the 410; the next request is a new watch-list, not a retry from 10.
    const gone = api.vmWatches.findIndex((w) => w.query.get('resourceVersion') === '10');
    expect(gone).toBeGreaterThan(0);
    expect(api.vmWatches[gone + 1]!.query.get('sendInitialEvents')).toBe('true');
    expect(api.vmWatches[gone + 1]!.query.get('resourceVersion')).toBeNull();
    expect(api.vmWatches[gone + 1]!.at - api.vmWatches[gone]!.at, 'at once, no back-off').toBeLessThan(400);
    expect(api.vmLists).toBe(0);
    api.mode = 'stream';
    await eventually(() => api.vmWatches.at(-1)?.closed === false, 3000, 'watching again');
    // Either the new watch-list itself, or a watch resumed from its bookmark.
    const last = api.vmWatches.at(-1)!.query;
    expect(last.get('sendInitialEvents') === 'true' || last.get('resourceVersion') === '10').toBe(true);
  });

  it('without watch-list (paged lists): failed watches resume from the list; an ERROR 410 lists again', async () => {
    const lines: string[] = [];
    const { api } = await start('fail-500', { minBackoffMs: 20, log: (l) => lines.push(l) }, false);
    expect(lines.join('\n')).toMatch(/refuses watch-list/);
    await eventually(() => api.vmWatches.length >= 2, 3000, 'a second failed watch');
    expect(api.vmWatches.every((w) => w.query.get('resourceVersion') === '10')).toBe(true);
    expect(api.vmLists, 'resumed from the list, not relisted').toBe(1);
    api.mode = 'error-410';
    await eventually(() => api.vmLists >= 2, 3000, 'relist after 410');
    api.mode = 'stream';
    await eventually(() => api.vmWatches.at(-1)?.closed === false, 3000, 'watching again');
    expect(api.vmWatches.at(-1)!.query.get('resourceVersion')).toBe('10');
    expect(api.vmWatchLists).toBe(0);
  });

  it('repeated failures back off exponentially with jitter, up to the maximum', async () => {
    const { api } = await start('fail-500', { minBackoffMs: 100, maxBackoffMs: 800, random: () => 1 });
    // Watches resuming from the watch-list's version (which answered and ended after its initial events).
    const resumes = () => api.vmWatches.filter((w) => w.query.get('resourceVersion') === '10');
    await eventually(() => resumes().length >= 6, 8000, 'six attempts');
    const attempts = resumes();
    expect(api.vmWatchLists, 'failures are retried from the resourceVersion').toBe(1);
    const gaps = attempts.slice(1, 6).map((w, i) => w.at - attempts[i]!.at);
    // random() = 1 takes the top of each jitter window [d/2, d]: 100, 200, 400, 800, 800 ms.
    const expected = [100, 200, 400, 800, 800];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i]! - 20);
      expect(gap).toBeLessThan(expected[i]! + 400);
    });
  });
});
