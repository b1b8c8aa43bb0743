/**
 * `npm run bench:ui`: the web UI with a 5,000-VM fleet in headless Chromium.
 *   1. navigation → first rendered VM table rows (aim < 1.5 s), as a ratio to a bare navigation (/healthz) and to
 *      the app shell without the fleet table (/create) measured in the same run;
 *   2. a VM's state change in the cluster → its new status in an open page (aim < 1 s), as a ratio to one
 *      REST round trip from the page (GET /api/vms/{ns}/{name}/row) in the same run.
 * Corral and the embedded cluster run in a child process (tests/e2e/serve.ts) so the browser and the server do
 * not share this process's event loop. The change is made on the cluster itself (a merge patch of runStrategy),
 * and its time is when the cluster's watch reports the new printableStatus.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from '@playwright/test';
import { buildUi } from '../tests/e2e/build-ui';

const VMS = Number(process.env.BENCH_VMS ?? '5000');
const RUNS = Number(process.env.BENCH_RUNS ?? '5');
const root = process.cwd();

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds the UI when .next is missing or older than src/app, so the bench measures the current code. */
function buildIfStale(): void {
  const id = join(root, '.next', 'BUILD_ID');
  if (existsSync(id) && statSync(id).mtimeMs > newestMtime(join(root, 'src', 'app'))) return;
  console.log('building the UI…');
  buildUi(root);
}

async function startCorral(): Promise<{ url: string; simUrl: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'tests/e2e/serve.ts',
      '--port',
      '0',
      '--sim-port',
      '0',
      '--fleet',
      String(VMS),
      '--speed',
      '10',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    },
  );
  const urls = await new Promise<{ url: string; simUrl: string }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const sim = /embedded cluster at (\S+)/.exec(out)?.[1];
      const corral = /corral at (\S+)/.exec(out)?.[1];
      if (sim && corral) resolve({ url: corral, simUrl: sim });
    });
    child.on('exit', (code) => reject(new Error(`corral exited with ${code}`)));
  });
  return { ...urls, stop: () => child.pid && process.kill(-child.pid, 'SIGTERM') };
}

async function waitReady(url: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const r = await fetch(`${url}/readyz`).catch(() => undefined);
    if (r?.status === 200) return performance.now() - t0;
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Navigation start → first `[data-vm]` row in the DOM, measured inside the page. */
async function timeToSelector(browser: Browser, url: string, selector: string | null): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  // No named inner functions in code sent to the page: tsx (esbuild keepNames) wraps them in a `__name()` helper
  // that does not exist in the browser.
  await page.addInitScript((sel) => {
    const w = window as unknown as { __seenAt?: number };
    if (!sel) return;
    new MutationObserver(() => {
      if (w.__seenAt === undefined && document.querySelector(sel)) w.__seenAt = performance.now();
    }).observe(document, { childList: true, subtree: true });
  }, selector);
  await page.goto(url, { waitUntil: selector ? 'commit' : 'load' });
  let ms: number;
  if (selector) {
    // Generous: the warm-up run right after start-up may wait for the server's first snapshot of the whole fleet.
    await page.waitForFunction(() => (window as unknown as { __seenAt?: number }).__seenAt !== undefined, null, {
      timeout: 180_000,
    });
    ms = await page.evaluate(() => (window as unknown as { __seenAt: number }).__seenAt);
  } else {
    ms = await page.evaluate(() => performance.getEntriesByType('navigation')[0]?.duration ?? Number.NaN);
  }
  await context.close();
  return ms;
}

interface VmObject {
  metadata: { name: string; namespace: string };
  status?: { printableStatus?: string };
}

/** Resolves with the wall-clock time at which the cluster's watch reports the VM leaving `from`. */
async function watchStatusChange(
  simUrl: string,
  ns: string,
  name: string,
  from: string,
  signal: AbortSignal,
): Promise<number> {
  const res = await fetch(
    `${simUrl}/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines?watch=true&fieldSelector=metadata.name%3D${name}`,
    { signal },
  );
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('watch ended');
    const now = Date.now();
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as { object: VmObject };
      const status = ev.object.status?.printableStatus;
      if (status && status !== from) return now;
    }
  }
}

async function main(): Promise<void> {
  buildIfStale();
  console.log(`starting Corral on an embedded cluster with ${VMS} VMs…`);
  const corral = await startCorral();
  let browser: Browser | undefined;
  try {
    const syncMs = await waitReady(corral.url);
    const browserInst = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    browser = browserInst;
    // Warm-up: the first navigation pays for Chromium start-up and Next's first render of each route.
    await timeToSelector(browserInst, `${corral.url}/`, '[data-vm]');
    await timeToSelector(browserInst, `${corral.url}/create`, '[data-image]');

    const bare: number[] = [];
    const shell: number[] = [];
    const rows: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await timeToSelector(browserInst, `${corral.url}/healthz`, null));
      shell.push(await timeToSelector(browserInst, `${corral.url}/create`, '[data-image]'));
      rows.push(await timeToSelector(browserInst, `${corral.url}/`, '[data-vm]'));
    }

    // Live latency: open the Datacenter filtered to one running VM, halt it on the cluster, time the change.
    const list = (await (await fetch(`${corral.url}/api/vms`)).json()) as {
      name: string;
      namespace: string;
      status: string;
    }[];
    const running = list.filter((v) => v.status === 'Running').slice(0, RUNS);
    if (running.length === 0) throw new Error('no running VM in the generated fleet');
    const page = await browserInst.newPage();
    const latencies: number[] = [];
    const roundTrips: number[] = [];
    for (const vm of running) {
      const key = `${vm.namespace}/${vm.name}`;
      await page.goto(`${corral.url}/?q=${encodeURIComponent(`ns:${vm.namespace} ${vm.name}`)}`);
      const cell = page.locator(`[data-vm="${key}"] [data-col="status"]`);
      await cell.waitFor();
      await page.evaluate((k) => {
        const w = window as unknown as { __changedAt?: number };
        w.__changedAt = undefined;
        const obs = new MutationObserver(() => {
          const text = document.querySelector(`[data-vm="${k}"] [data-col="status"]`)?.textContent;
          if (text && text !== 'Running' && w.__changedAt === undefined) w.__changedAt = Date.now();
        });
        obs.observe(document.body, { subtree: true, childList: true, characterData: true });
      }, key);
      roundTrips.push(
        await page.evaluate(async (k) => {
          const t0 = performance.now();
          await (await fetch(`/api/vms/${k}/row`)).json();
          return performance.now() - t0;
        }, key),
      );
      const abort = new AbortController();
      const clusterChange = watchStatusChange(corral.simUrl, vm.namespace, vm.name, 'Running', abort.signal);
      await new Promise((r) => setTimeout(r, 100)); // the watch is open before the change
      const patch = await fetch(
        `${corral.simUrl}/apis/kubevirt.io/v1/namespaces/${vm.namespace}/virtualmachines/${vm.name}`,
        {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/merge-patch+json' },
          body: JSON.stringify({ spec: { runStrategy: 'Halted' } }),
        },
      );
      if (!patch.ok) throw new Error(`patch ${key}: ${patch.status} ${await patch.text()}`);
      const changedInCluster = await clusterChange;
      abort.abort();
      await page.waitForFunction(
        () => (window as unknown as { __changedAt?: number }).__changedAt !== undefined,
        null,
        { timeout: 30_000 },
      );
      const changedInPage = await page.evaluate(() => (window as unknown as { __changedAt: number }).__changedAt);
      latencies.push(changedInPage - changedInCluster);
    }

    const f = (ms: number) => `${ms.toFixed(0)} ms`;
    const r = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const mRows = median(rows);
    const mLive = median(latencies);
    console.log(`\nUI bench — ${VMS} VMs, ${RUNS} runs each, medians (Corral synced ${VMS} VMs in ${f(syncMs)})`);
    console.log(
      `  navigation → first VM rows      ${f(mRows).padStart(8)}   aim < 1500 ms  ${mRows < 1500 ? 'OK' : 'MISSED'}`,
    );
    console.log(`    baseline bare page (/healthz) ${f(median(bare)).padStart(8)}   ratio ${r(mRows, median(bare))}`);
    console.log(`    baseline app shell (/create)  ${f(median(shell)).padStart(8)}   ratio ${r(mRows, median(shell))}`);
    console.log(
      `  cluster change → page status    ${f(mLive).padStart(8)}   aim < 1000 ms  ${mLive < 1000 ? 'OK' : 'MISSED'}`,
    );
    console.log(
      `    baseline REST round trip      ${f(median(roundTrips)).padStart(8)}   ratio ${r(mLive, median(roundTrips))}`,
    );
    console.log(`  all runs: rows ${rows.map(f).join(', ')}; live ${latencies.map(f).join(', ')}`);
  } finally {
    await browser?.close();
    corral.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
