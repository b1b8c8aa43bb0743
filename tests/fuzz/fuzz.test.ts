/**
 * The fuzz suite (issue 14): thousands of generated requests against `/api` (from the live `/api/openapi.json`)
 * and `/api2/json` (from the endpoints in docs/proxmox.md), with a fixed seed, asserting no 5xx, every error in
 * its envelope, refusals for invalid input, no cluster change from a refused request, and RSS back within 10%.
 * Replay with `FUZZ_SEED=<seed> npx vitest run tests/fuzz`; every failure prints the request and the answer.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxmoxHandler, type ProxmoxHandler } from '@/proxmox/index';
import { parseGrants } from '@/proxmox/auth/tokens';
import { eventually, startHarness, type Harness } from '../integration/server/harness';
import { ADMIN_SECRET, TOKEN_CONFIG, VIEWER_SECRET } from '../integration/proxmox/harness';
import { generateApiCases, type OpenApiDocument } from './api-cases';
import { settledMemory, type MemorySample } from './cluster-state';
import { closeAgent, describeCase, send, type FuzzCase, type FuzzReply } from './http';
import { mulberry32, seedFromEnv } from './prng';
import { generateProxmoxCases } from './proxmox-cases';
import { groupFindings, runCases, type FindingKind, type RunResult, type SuiteChecks } from './runner';

const SEED = seedFromEnv();
const API_REQUESTS = Number(process.env.FUZZ_API_REQUESTS ?? 1500);
const PROXMOX_REQUESTS = Number(process.env.FUZZ_PROXMOX_REQUESTS ?? 1100);
const EXISTING = { namespace: 'tailvm', name: 'fuzz-target' };
const ADMIN_TOKEN = `root@pam!ci=${ADMIN_SECRET}`;
const VIEWER_TOKEN = `monitor@pve!ro=${VIEWER_SECRET}`;
const PVE_CONTENT_TYPE = 'application/json;charset=UTF-8';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const apiChecks: SuiteChecks = {
  errorShape(_c, r) {
    if (!(r.headers['content-type'] ?? '').startsWith('application/json'))
      return `content-type ${String(r.headers['content-type'])}`;
    if (!r.isJson || !isObject(r.json)) return 'body is not a JSON object';
    const keys = Object.keys(r.json);
    if (keys.length !== 1 || keys[0] !== 'error' || typeof r.json.error !== 'string')
      return `body keys ${JSON.stringify(keys)} (want exactly {"error": string})`;
    return undefined;
  },
  message: (r) => (isObject(r.json) && typeof r.json.error === 'string' ? r.json.error : ''),
};

const proxmoxChecks: SuiteChecks = {
  errorShape(_c, r) {
    if (r.headers['content-type'] !== PVE_CONTENT_TYPE) return `content-type ${String(r.headers['content-type'])}`;
    if (!r.isJson || !isObject(r.json)) return 'body is not a JSON object';
    const extra = Object.keys(r.json).filter((k) => !['data', 'message', 'errors'].includes(k));
    if (extra.length) return `unexpected keys ${JSON.stringify(extra)}`;
    if (r.json.data !== null) return 'data is not null';
    if ('message' in r.json && typeof r.json.message !== 'string') return 'message is not a string';
    if (
      'errors' in r.json &&
      !(isObject(r.json.errors) && Object.values(r.json.errors).every((v) => typeof v === 'string'))
    )
      return 'errors is not {param: string}';
    return undefined;
  },
  // PVE answers 501 "Method '…' not implemented" for an endpoint it does not have (docs/proxmox.md).
  allowedRefusal: (_c: FuzzCase, r: FuzzReply) =>
    r.status === 501 && isObject(r.json) && /^Method '.*' not implemented/.test(String(r.json.message)),
  message(r) {
    if (!isObject(r.json)) return '';
    return `${String(r.json.message ?? '')} ${JSON.stringify(r.json.errors ?? {})}`;
  },
};

let h: Harness;
let proxmox: ProxmoxHandler;
let api: RunResult;
let px: RunResult;
let memBefore: MemorySample;
let memAfter: MemorySample;
let wallMs = 0;

/**
 * Numbers the cases and materialises their bodies. The generators build big bodies with `repeat` and template
 * literals, which V8 keeps as compact rope strings and flattens in place the first time one is sent: ~25 MB of the
 * fuzzer's own data would appear on the heap during the measured run and be read as Corral's growth. A copy through
 * a Buffer is flat from the start; its bytes are the ones `send` would put on the wire anyway (UTF-8).
 */
function number(cases: Omit<FuzzCase, 'id' | 'suite'>[], suite: FuzzCase['suite'], from: number): FuzzCase[] {
  return cases.map((c, i) => ({
    ...c,
    ...(c.body === undefined ? {} : { body: Buffer.from(c.body, 'utf8').toString('utf8') }),
    id: from + i,
    suite,
  }));
}

/**
 * The Proxmox handler's log lines for errors it did not expect (not a ProxmoxError): answered, but worth reading.
 * Its other lines (login-failure bursts of the limiter) are the fuzzer's bad credentials doing their job.
 */
function unexpectedFailures(logs: string[]): string[] {
  return logs.filter((l) => /^\[proxmox\] [A-Z]+ \S+ failed: /.test(l));
}

function report(result: () => RunResult, kind: FindingKind): void {
  const findings = result().findings.filter((f) => f.kind === kind);
  if (findings.length)
    console.error(`[fuzz] seed=0x${SEED.toString(16)} ${kind}: ${findings.length}\n${groupFindings(findings)}`);
  expect(findings.map((f) => `${describeCase(f.case, 120)} → ${f.reply.slice(0, 120)}`)).toEqual([]);
}

describe(`fuzz (seed 0x${SEED.toString(16)})`, () => {
  beforeAll(async () => {
    const t0 = Date.now();
    console.log(`[fuzz] seed=0x${SEED.toString(16)} (set FUZZ_SEED to change it)`);
    h = await startHarness({ fleet: 'empty' });
    const logs: string[] = [];
    proxmox = createProxmoxHandler({
      services: h.corral.services,
      grants: parseGrants(TOKEN_CONFIG),
      log: (l) => logs.push(l),
    });
    h.corral.http.mountProxmox((req, res) => proxmox.handle(req, res));

    // The one VM that exists: stopped, and only ever sent requests that cannot act on it.
    const created = await h.post('/api/vms', { name: EXISTING.name, namespace: EXISTING.namespace, image: 'fedora' });
    expect(created.status, created.text).toBe(201);
    const admin = { authorization: `PVEAPIToken=${ADMIN_TOKEN}` };
    const vmid = await eventually(async () => {
      const r = await h.get('/api2/json/cluster/resources?type=vm', admin);
      const rows = (r.body as { data?: { name?: string; vmid?: number }[] }).data ?? [];
      return rows.find((x) => x.name === EXISTING.name)?.vmid;
    });
    const nodes = (await h.get('/api2/json/nodes', admin)).body as { data: { node: string }[] };
    const node = nodes.data[0]?.node ?? 'corral-1';

    const doc = (await h.get('/api/openapi.json')).body as OpenApiDocument;
    const prefix = doc.servers?.[0]?.url?.replace(/\/$/, '') || '/api';
    /** Both suites' cases from one seed; `idBase` keeps the ids of different sets apart. */
    const casesFrom = (seed: number, idBase: number) => ({
      api: number(
        generateApiCases(doc, mulberry32(seed), { prefix, existing: EXISTING, count: API_REQUESTS }),
        'api',
        idBase,
      ),
      px: number(
        generateProxmoxCases(mulberry32(seed ^ 0x9e3779b9), {
          prefix: '/api2/json',
          node,
          existingVmid: vmid,
          adminToken: ADMIN_TOKEN,
          viewerToken: VIEWER_TOKEN,
          count: PROXMOX_REQUESTS,
        }),
        'proxmox',
        idBase + 100_000,
      ),
    });
    const { api: apiCases, px: pxCases } = casesFrom(SEED, 0);
    const deleteVm = async (namespace: string, name: string) => {
      await send(h.url, {
        id: -1,
        suite: 'api',
        method: 'DELETE',
        path: `/api/vms/${namespace}/${name}`,
        headers: {},
        route: 'cleanup',
        label: 'cleanup',
        mustRefuse: false,
      });
      await eventually(
        () => !h.sim.store.get('kubevirt.io/virtualmachines', namespace, name),
        5000,
        `cleanup of ${namespace}/${name}`,
      ).catch(() => undefined);
    };

    // Warm-up so JIT, caches and the allocators' arenas are in place before the RSS baseline: the same generators
    // with other seeds, writes included, so every route and its error paths have run once with different values
    // (replaying the measured cases themselves would make writes collide with their own earlier results).
    const warm = { requests: 0, findings: [], statuses: {}, ms: 0 };
    const { api: warmApi, px: warmPx } = casesFrom(SEED ^ 0x5a5a5a5a, 200_000);
    await runCases(warmApi, { base: h.url, store: h.sim.store, checks: apiChecks, deleteVm }, warm);
    await runCases(warmPx, { base: h.url, store: h.sim.store, checks: proxmoxChecks, deleteVm }, warm);
    memBefore = await settledMemory();

    api = await runCases(apiCases, { base: h.url, store: h.sim.store, checks: apiChecks, deleteVm });
    px = await runCases(pxCases, { base: h.url, store: h.sim.store, checks: proxmoxChecks, deleteVm });
    memAfter = await settledMemory();
    wallMs = Date.now() - t0;
    console.log(
      `[fuzz] /api: ${api.requests} requests in ${api.ms} ms ${JSON.stringify(api.statuses)}; ` +
        `/api2/json: ${px.requests} requests in ${px.ms} ms ${JSON.stringify(px.statuses)}; ` +
        `RSS ${(memBefore.rss / 2 ** 20).toFixed(0)} → ${(memAfter.rss / 2 ** 20).toFixed(0)} MiB, heapUsed ` +
        `${(memBefore.heapUsed / 2 ** 20).toFixed(0)} → ${(memAfter.heapUsed / 2 ** 20).toFixed(0)} MiB, heapTotal ` +
        `${(memBefore.heapTotal / 2 ** 20).toFixed(0)} → ${(memAfter.heapTotal / 2 ** 20).toFixed(0)} MiB, external ` +
        `${(memBefore.external / 2 ** 20).toFixed(0)} → ${(memAfter.external / 2 ** 20).toFixed(0)} MiB (gc: ${memAfter.gc}); ` +
        `wall ${wallMs} ms; ${unexpectedFailures(logs).length} unexpected Proxmox failures logged`,
    );
    for (const line of unexpectedFailures(logs).slice(0, 5)) console.log(`[fuzz] ${line.split('\n', 3).join(' | ')}`);
    if (process.env.FUZZ_REPORT)
      writeFileSync(
        process.env.FUZZ_REPORT,
        JSON.stringify({ seed: SEED, api, proxmox: px, memBefore, memAfter, wallMs }, null, 1),
      );
  }, 180_000);

  afterAll(async () => {
    closeAgent();
    proxmox?.close();
    await h?.close();
  });

  it('sends at least 2,000 requests', () => {
    expect(api.requests + px.requests).toBeGreaterThanOrEqual(2000);
  });

  for (const [suite, result] of [
    ['/api', () => api],
    ['/api2/json', () => px],
  ] as const) {
    describe(suite, () => {
      it('answers every request, never with a 5xx', () => {
        report(result, 'no-answer');
        report(result, 'server-error');
      });
      it('answers every error in its envelope', () => report(result, 'error-shape'));
      it('refuses every invalid or unauthorised request with a 4xx', () => report(result, 'not-refused'));
      it('names an unknown field in its 400', () => report(result, 'field-not-named'));
      it('changes no cluster object on a refused request', () => report(result, 'state-changed'));
    });
  }

  it('returns RSS to within 10% of its level before the run', () => {
    // Whole-process RSS (Corral, the embedded cluster and the fuzzer share it) after forced GCs.
    expect(memAfter.rss).toBeLessThanOrEqual(memBefore.rss * 1.1);
  });
});
