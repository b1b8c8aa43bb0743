/**
 * GET /metrics on the embedded cluster: the exposition passes `promtool check metrics` (Debian's `prometheus`
 * package), agrees with /api/vms, escapes a kube context name that needs every escape, ages honestly when the
 * collector stops, counts tasks, and without --metrics still answers 200 with corral_collection_success 0.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import type { VmRow } from '@/server/schemas/vms';
import { eventually } from './harness';

/** Quote, backslash and newline: the three characters a label value must escape. */
const TRICKY_CONTEXT = 'lab "east"\\rack\n2';
const ESCAPED_CONTEXT = 'lab \\"east\\"\\\\rack\\n2';

let sim: EmbeddedCluster;
let on: RunningCorral;
let off: RunningCorral;

function kubeconfigWithContext(yaml: string, context: string): string {
  // A JSON string is a valid YAML double-quoted scalar, escapes included.
  return yaml
    .replace('- name: corral-sim\n  context:', `- name: ${JSON.stringify(context)}\n  context:`)
    .replace('current-context: corral-sim', `current-context: ${JSON.stringify(context)}`);
}

function start(yaml: string, prometheus?: { intervalMs: number }) {
  return startCorral({
    kube: { yaml },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: 2000,
    metricsIntervalMs: 300,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
    ...(prometheus ? { prometheus } : {}),
  });
}

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'demo', speed: 50 });
  on = await start(kubeconfigWithContext(sim.kubeconfig, TRICKY_CONTEXT), { intervalMs: 200 });
  off = await start(sim.kubeconfig);
  await Promise.all([on.cluster.cache.waitForSync(20_000), off.cluster.cache.waitForSync(20_000)]);
}, 60_000);
afterAll(async () => {
  await on?.close();
  await off?.close();
  await sim?.close();
});

async function scrape(corral: RunningCorral): Promise<string> {
  const res = await fetch(`${corral.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

/** The value of the one sample whose series (name + labels) starts with `prefix`. */
function value(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function promtool(text: string) {
  return spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
}

describe('GET /metrics with --metrics', () => {
  it('is valid Prometheus text: promtool check metrics passes, every ADR-0011 family is declared', async () => {
    // Wait for usage readings, so the check covers the cpu/memory rows too.
    const text = await eventually(async () => {
      const t = await scrape(on);
      return /^corral_instance_cpu_cores\{/m.test(t) ? t : undefined;
    }, 20_000);
    const check = promtool(text);
    expect(check.error).toBeUndefined(); // promtool is installed (.ci/run installs Debian's prometheus)
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
    for (const family of [
      'corral_collection_age_seconds gauge',
      'corral_collection_duration_seconds gauge',
      'corral_collection_success gauge',
      'corral_backend_up gauge',
      'corral_backend_error gauge',
      'corral_instance_info gauge',
      'corral_instance_running gauge',
      'corral_instance_ready gauge',
      'corral_instance_cpu_cores gauge',
      'corral_instance_memory_bytes gauge',
      'corral_instances gauge',
      'corral_pool_instances gauge',
      'corral_pool_running gauge',
      'corral_check gauge',
      'corral_tasks_total counter',
    ])
      expect(text).toContain(`\n# TYPE ${family}\n`);
    expect(value(text, 'corral_collection_success ')).toBe(1);
  });

  it('counts instances by state exactly as /api/vms lists them', async () => {
    await eventually(async () => {
      // The fleet may still be settling (VMs booting): retry until one scrape and one list describe the same moment.
      const rows = (await (await fetch(`${on.url}/api/vms`)).json()) as VmRow[];
      const text = await scrape(on);
      const ready = rows.filter((r) => r.ready).length;
      const running = rows.filter((r) => r.running && !r.ready).length;
      const stopped = rows.filter((r) => !r.running).length;
      const state = (s: string) =>
        value(text, `corral_instances{backend="kubevirt",context="${ESCAPED_CONTEXT}",state="${s}"}`);
      return (
        rows.length > 0 &&
        state('ready') === ready &&
        state('running') === running &&
        state('stopped') === stopped &&
        value(text, 'corral_pool_instances{pool=""}') === rows.length &&
        value(text, 'corral_pool_running{pool=""}') === rows.filter((r) => r.running).length &&
        rows.every(
          (r) =>
            value(
              text,
              `corral_instance_running{name="${r.name}",backend="kubevirt",context="${ESCAPED_CONTEXT}",namespace="${r.namespace}",pool=""}`,
            ) === (r.running ? 1 : 0),
        )
      );
    }, 20_000);
  });

  it('escapes a context name with a quote, a backslash and a newline in every series that carries it', async () => {
    const text = await scrape(on);
    expect(text).toContain(`corral_backend_up{context="${ESCAPED_CONTEXT}",backend="kubevirt"} 1`);
    expect(text).toContain(`,context="${ESCAPED_CONTEXT}",namespace="tailvm",pool="",node=`);
    // No raw newline leaked into a sample line: every line is a comment or `name{…} value`.
    for (const line of text.split('\n').filter(Boolean))
      expect(line).toMatch(/^(# (HELP|TYPE) .+|[a-z_]+(\{.*\})? [-+0-9.e]+|[a-z_]+(\{.*\})? (NaN|[+-]Inf))$/);
  });

  it('has no usage rows for a stopped VM (absent, not 0)', async () => {
    const text = await scrape(on);
    expect(text).toMatch(/^corral_instance_running\{name="sandbox",.*\} 0$/m);
    expect(text).not.toMatch(/^corral_instance_(cpu_cores|memory_bytes)\{name="sandbox",/m);
  });

  it('counts a finished task in corral_tasks_total', async () => {
    const series = 'corral_tasks_total{action="start",status="done",';
    const before = value(await scrape(on), series) ?? 0;
    const res = await fetch(`${on.url}/api/vms/tailvm/sandbox/start`, { method: 'POST' });
    expect(res.status).toBeLessThan(300);
    await eventually(async () => (value(await scrape(on), series) ?? 0) === before + 1, 20_000, 'the counter');
  });

  it('answers GET (and HEAD) only, refuses a query string, and keeps the Host allow-list', async () => {
    const head = await fetch(`${on.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
    expect(await head.text()).toBe('');
    const post = await fetch(`${on.url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const query = await fetch(`${on.url}/metrics?format=json`);
    expect(query.status).toBe(400);
    expect(await query.json()).toEqual({ error: 'unknown query parameter "format": /metrics takes none' });
    const { port } = new URL(on.url);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/metrics', headers: { host: 'rebind.attacker.example' } }, (r) => {
        r.resume();
        resolve(r.statusCode);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(421);
  });

  it('answers gzip as one ordinary member whose text equals the plain answer', async () => {
    const { port } = new URL(on.url);
    const get = (acceptEncoding: string) =>
      new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/metrics', headers: { 'accept-encoding': acceptEncoding } }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ encoding: r.headers['content-encoding'], body: Buffer.concat(chunks) }));
        })
          .on('error', reject)
          .end();
      });
    const withoutAge = (text: string) => text.replace(/^corral_collection_age_seconds .*\n/m, '');
    on.prometheus!.stop(); // one snapshot for both answers
    try {
      const zipped = await get('gzip, deflate');
      const plain = await get('gzip;q=0, identity');
      expect(zipped.encoding).toBe('gzip');
      expect(plain.encoding).toBeUndefined();
      expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
      const text = gunzipSync(zipped.body).toString('utf8');
      // One member: its trailer's size is the whole text (a second member would carry only its own size).
      expect(zipped.body.readUInt32LE(zipped.body.length - 4)).toBe(Buffer.byteLength(text));
      expect(withoutAge(text)).toBe(withoutAge(plain.body.toString('utf8')));
      expect(promtool(text).status).toBe(0);
    } finally {
      on.prometheus!.start();
    }
  });

  it('lets corral_collection_age_seconds grow while the collector is stopped', async () => {
    const collector = on.prometheus!;
    const age = async () => value(await scrape(on), 'corral_collection_age_seconds ')!;
    // While running, the snapshot is renewed every 200 ms.
    await eventually(async () => (await age()) < 1, 10_000, 'a fresh snapshot');
    collector.stop();
    const stopped = await age();
    await new Promise((r) => setTimeout(r, 1500));
    expect((await age()) - stopped).toBeGreaterThanOrEqual(1.4);
    expect(value(await scrape(on), 'corral_collection_success ')).toBe(1); // stopped, not failed
    collector.start();
    await eventually(async () => (await age()) < 1, 10_000, 'a fresh snapshot after the restart');
  });
});

describe('GET /metrics without --metrics', () => {
  it('answers 200 with corral_collection_success 0 and nothing else', async () => {
    const text = await scrape(off);
    expect(text).toBe(
      '# HELP corral_collection_success 1 when the last collection succeeded; 0 when it failed, has not run, or ' +
        'collection is off (no --metrics)\n# TYPE corral_collection_success gauge\ncorral_collection_success 0\n',
    );
    expect(promtool(text).status).toBe(0);
  });
});
