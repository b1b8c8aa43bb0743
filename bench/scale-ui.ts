/**
 * The UI half of `npm run bench:scale` (issue 17), also runnable alone: `node --import tsx bench/scale-ui.ts`.
 * For each fleet size (SCALE_UI_SIZES, default 10,000 and 50,000 VMs, written straight into a controller-less
 * embedded apiserver in this process), Corral with its UI runs in a child process (tests/e2e/serve.ts) and a
 * headless Chromium (/usr/bin/chromium) opens the Datacenter page, on loopback and through a throttling TCP proxy
 * (bench/lib/throttle-proxy.ts: 50 Mbit/s, 20 ms RTT, so compression is negotiated as over a real link):
 *   - navigation → first VM rows in the DOM, in a fresh browser context each time (cold cache), with the bytes the
 *     page pulled through the proxy;
 *   - a VM's status change in the apiserver → its new status in the open, unfiltered table;
 * (SCALE_UI_ONLY=first-rows: after the filter in Node, the first rows alone, with the VM count shown with them)
 * and on loopback only (SCALE_UI_ONLY=filter: this part alone; SCALE_UI_PROFILE=file.cpuprofile also profiles it,
 * SCALE_UI_TRACE=file.json traces it):
 *   - per keystroke over typed queries (filterLatency): how many keys were painted in the frame after them, the
 *     input event's own work, that frame's work, → painted (against the same wait with no key), → the filtered
 *     table painted;
 *   - the tab's JS heap after a forced GC (CDP Runtime.getHeapUsage), and how many tree items are in the DOM with
 *     every group open (the tree must not render 50,000 children).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { startEmbeddedCluster } from '../src/sim/index';
import { resourceKey } from '../src/sim/store/types';
import { buildUi } from '../tests/e2e/build-ui';
import { FilterIndex } from '../src/app/lib/filter-index';
import { matchesFilter, parseFilter, type FilterableVm } from '../src/app/lib/filter-query';
import { percentile, seedBenchFleet } from './lib/fleet';
import { startThrottleProxy } from './lib/throttle-proxy';

const root = join(import.meta.dirname, '..');
const RUNS = Number(process.env.SCALE_UI_RUNS ?? 3);
/** SCALE_UI_ONLY=filter: only the filter figures (in Node and in the page), the heap and the tree. */
const FILTER_ONLY = process.env.SCALE_UI_ONLY === 'filter';
const LINK = { mbit: 50, rttMs: 20 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p95 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    95,
  );
const ms = (x: number) => `${x.toFixed(0)} ms`;
const QUERIES = ['vm-01234', 'status:running tag:prod', '10.42.7.1', 'web'];

/** Every keystroke of typing each query and then clearing it. */
const keystrokes = (queries: string[]) =>
  queries.flatMap((q) => [...Array.from({ length: q.length }, (_, i) => q.slice(0, i + 1)), '']);

/**
 * The same keystrokes over rows shaped like the bench fleet's, in this process: the plain filter (every row through
 * matchesFilter) against the index, p95 per keystroke, and the index run in steps as the page runs it (a fresh
 * index: the first keystroke builds it): the steps' times, the longest being how long the page's main thread is
 * held by the filter in one piece (wall clock: on a loaded machine a step the OS preempts or a GC lands in looks
 * long, hence the median and p99 beside it). The browser figures below include React's render.
 */
function filterInProcess(n: number): { plain: number; index: number; steps: number[] } {
  const rows: FilterableVm[] = Array.from({ length: n }, (_, i) => ({
    name: `vm-${String(i).padStart(5, '0')}`,
    namespace: 'bench',
    status: i % 2 === 0 ? 'Running' : 'Stopped',
    node: i % 2 === 0 ? `corral-${(i % 3) + 1}` : '',
    ip: i % 2 === 0 ? `10.42.${(i >> 8) & 255}.${i & 255}` : '',
    tags: i % 5 === 0 ? ['prod'] : [],
  }));
  const plain: number[] = [];
  const indexed: number[] = [];
  const index = new FilterIndex(rows);
  const stepped = new FilterIndex(rows);
  const stepTimes: number[] = [];
  for (const q of keystrokes(QUERIES)) {
    const filter = parseFilter(q);
    let t = performance.now();
    rows.filter((r) => matchesFilter(filter, r));
    plain.push(performance.now() - t);
    t = performance.now();
    index.filter(filter);
    indexed.push(performance.now() - t);
    const steps = stepped.steps(filter);
    for (;;) {
      t = performance.now();
      const done = steps.next().done;
      stepTimes.push(performance.now() - t);
      if (done) break;
    }
  }
  return { plain: p95(plain), index: p95(indexed), steps: stepTimes.sort((a, b) => a - b) };
}

async function startCorralUi(kubeconfig: string): Promise<{ url: string; child: ChildProcess }> {
  // Node 24 from node_modules (as `npm run` puts it first on PATH), whatever node runs this file.
  const child = spawn(
    join(root, 'node_modules', '.bin', 'node'),
    ['--import', 'tsx', 'tests/e2e/serve.ts', '--port', '0', '--kubeconfig', kubeconfig],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /corral at (\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`corral exited with ${code}`)));
  });
  return { url, child };
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || !child.pid) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}

async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Navigation start → first `[data-vm]` row in the DOM, measured in the page, in a fresh context (cold cache), and
 * the VM count the page showed at that moment (the Datacenter's VMs card: the whole list's count, not the page's).
 */
async function firstRows(browser: Browser, url: string): Promise<{ at: number; count: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  // No named inner functions in code sent to the page (tsx's keepNames helper does not exist there).
  await page.addInitScript(() => {
    const w = window as unknown as { __seenAt?: number; __countAt?: string };
    new MutationObserver(() => {
      if (w.__seenAt === undefined && document.querySelector('[data-vm]')) {
        w.__seenAt = performance.now();
        w.__countAt = document.querySelector('[data-testid="card-vms"]')?.textContent ?? '';
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(() => (window as unknown as { __seenAt?: number }).__seenAt !== undefined, null, {
    timeout: 300_000,
  });
  const seen = await page.evaluate(() => {
    const w = window as unknown as { __seenAt: number; __countAt: string };
    return { at: w.__seenAt, count: w.__countAt };
  });
  await context.close();
  return seen;
}

/** SCALE_UI_ONLY=first-rows: after the filter in Node, only the cold loads (loopback and through the link). */
const ONLY_FIRST_ROWS = process.env.SCALE_UI_ONLY === 'first-rows';

/** Apiserver change of one visible VM's status → the new text in its status cell, wall clock, per run. */
async function changeToScreen(
  page: Page,
  change: (name: string, status: string) => void,
  names: string[],
  status: string,
): Promise<number[]> {
  const out: number[] = [];
  for (const name of names) {
    const key = `bench/${name}`;
    await page.locator(`[data-vm="${key}"] [data-col="status"]`).waitFor({ timeout: 120_000 });
    await page.evaluate(
      ([k, want]) => {
        const w = window as unknown as { __changedAt?: number };
        w.__changedAt = undefined;
        const obs = new MutationObserver(() => {
          const text = document.querySelector(`[data-vm="${k}"] [data-col="status"]`)?.textContent;
          if (text === want && w.__changedAt === undefined) {
            w.__changedAt = Date.now();
            obs.disconnect();
          }
        });
        obs.observe(document.body, { subtree: true, childList: true, characterData: true });
      },
      [key, status],
    );
    const t0 = Date.now();
    change(name, status);
    await page.waitForFunction(() => (window as unknown as { __changedAt?: number }).__changedAt !== undefined, null, {
      timeout: 60_000,
    });
    out.push((await page.evaluate(() => (window as unknown as { __changedAt: number }).__changedAt)) - t0);
  }
  return out;
}

/** What SCALE_UI_TRACE records: the main thread's tasks, frames, input and scheduling, and user timings. */
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'blink.user_timing',
  'toplevel',
  'v8.execute',
];

/** Per keystroke of filterLatency, ms from the input event. */
export interface KeystrokeTimes {
  /** The input event's own work: its handlers and React's synchronous render of the page, up to its microtasks. */
  handled: number;
  /** → that frame painted, counted from the first vsync after the key: at most one frame interval (16.7 ms)
   * when the key is on screen in the frame it could first be in (vsyncs from the frames' own times, what each
   * requestAnimationFrame reports). */
  pastTick: number;
  /** That frame's own work: its rAF callbacks, style, layout and paint (→ the first task after it). */
  frameWork: number;
  /** → that frame painted: what the box showing the key feels like. */
  painted: number;
  /** → the table showing that query's rows, painted. */
  table: number;
}

/**
 * Sets the Datacenter filter to each value in turn, as typing does (one input event per keystroke), and measures
 * each keystroke (KeystrokeTimes): the page marks the query its table shows with `data-filtered`; the table
 * follows the box once the key's frame is painted, so it comes a frame or more later. Keys are sent at 0–16 ms after a frame (a
 * fixed spread, as typing lands anywhere in a frame), and before each the same wait for a frame is measured with
 * no key (`floor`): how long "the next frame, painted" takes when there is nothing to do — the time to the
 * display's next tick plus an idle frame.
 * Sent as a string: tsx's keepNames helper (__name) does not exist in the page.
 */
async function filterLatency(page: Page, values: string[]): Promise<{ keys: KeystrokeTimes[]; floor: number[] }> {
  const keys: KeystrokeTimes[] = [];
  const floor: number[] = [];
  for (const [i, value] of values.entries()) {
    const r = (await page.evaluate(`(async (value, phase) => {
      const input = document.querySelector('[data-testid="vm-filter"]');
      const shows = function () {
        const el = document.querySelector('[data-filtered]');
        return el !== null && el.getAttribute('data-filtered') === value;
      };
      // [the frame's vsync time, its callbacks' start, the first task after it: painted]
      const frame = function () {
        return new Promise(function (r) {
          requestAnimationFrame(function (vsync) {
            const start = performance.now();
            setTimeout(function () { r([vsync, start, performance.now()]); }, 0);
          });
        });
      };
      const interval = 1000 / 60;
      // Keys come at any moment of a frame, not right after one: wait \`phase\` ms after a frame, then measure.
      const after = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };
      await frame();
      await after(phase);
      const t = performance.now();
      const idle = await frame();
      const floor = idle[2] - t;
      await after(phase);
      const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
      const t0 = performance.now();
      setValue.call(input, value);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await Promise.resolve();
      const handled = performance.now() - t0;
      const f = await frame();
      const times = {
        handled: handled,
        pastTick: f[2] - (idle[0] + Math.ceil((t0 - idle[0]) / interval) * interval),
        frameWork: f[2] - f[1],
        painted: f[2] - t0,
      };
      if (shows()) return [floor, Object.assign(times, { table: times.painted })];
      while (!shows()) await new Promise(function (r) { setTimeout(r, 0); });
      await frame();
      return [floor, Object.assign(times, { table: performance.now() - t0 })];
    })(${JSON.stringify(value)}, ${(i * 7) % 17})`)) as [number, KeystrokeTimes];
    floor.push(r[0]);
    keys.push(r[1]);
  }
  return { keys, floor };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

export async function scaleUi(say: (line: string) => void, sizes: number[]): Promise<void> {
  // Built when .next is missing or older than src/app, so the bench measures the current UI.
  const id = join(root, '.next', 'BUILD_ID');
  if (!existsSync(id) || statSync(id).mtimeMs < newestMtime(join(root, 'src', 'app'))) buildUi(root);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    for (const n of sizes) await oneSize(browser, n, say);
  } finally {
    await browser.close();
  }
}

async function oneSize(browser: Browser, n: number, say: (line: string) => void): Promise<void> {
  const size = n.toLocaleString('en');
  filterInProcess(n); // warm-up (JIT)
  const inProcess = filterInProcess(n);
  say(
    `${size} VMs: filter in Node, p95 per keystroke: plain ${inProcess.plain.toFixed(1)} ms, index ${inProcess.index.toFixed(1)} ms ` +
      `(${keystrokes(QUERIES).length} keystrokes, the index's first build included); in steps: ${inProcess.steps.length} ` +
      `steps, median ${median(inProcess.steps).toFixed(2)} ms, p99 ${percentile(inProcess.steps, 99).toFixed(2)} ms, ` +
      `longest ${Math.max(...inProcess.steps).toFixed(1)} ms`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'corral-scale-ui-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [], kubeconfigPath });
  seedBenchFleet(sim.store, n);
  const vms = resourceKey('kubevirt.io', 'virtualmachines');
  const change = (name: string, status: string) =>
    sim.store.mutate(vms, 'bench', name, (o) => {
      const vm = o as { status?: Record<string, unknown> };
      vm.status = { ...vm.status, printableStatus: status };
    });
  const { url, child } = await startCorralUi(kubeconfigPath);
  const proxy = await startThrottleProxy(url, LINK.mbit, LINK.rttMs);
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
    await waitFor(async () => ((await (await fetch(`${url}/api/vms`)).json()) as unknown[]).length === n, `${n} rows`);
    if (!FILTER_ONLY) await firstRows(browser, `${url}/`); // warm-up: Next's first render, the server's first lists
    let visible = 0;
    for (const [label, base] of FILTER_ONLY
      ? []
      : ([
          ['loopback', url],
          [`${LINK.mbit} Mbit/s, ${LINK.rttMs} ms RTT`, proxy.url],
        ] as const)) {
      const rows: number[] = [];
      const down: number[] = [];
      const counts = new Set<string>();
      for (let i = 0; i < RUNS; i++) {
        const before = proxy.bytes.down;
        const seen = await firstRows(browser, `${base}/`);
        rows.push(seen.at);
        counts.add(seen.count);
        down.push(proxy.bytes.down - before);
      }
      const through = base === proxy.url ? `, ${(median(down) / 1024).toFixed(0)} KiB through the link` : '';
      const first =
        `${size} VMs, ${label}: UI first rows ${ms(median(rows))} (runs ${rows.map(ms).join(', ')}${through}; ` +
        `VMs card with them: ${[...counts].join(' / ')}; load ${loadavg()[0]!.toFixed(1)})`;
      if (ONLY_FIRST_ROWS) {
        say(first);
        continue;
      }
      const page = await browser.newPage();
      await page.goto(`${base}/`);
      // The first rows by name are the ones on screen; each run changes another one, Stopped ↔ Paused.
      const names = Array.from({ length: RUNS }, () => `vm-${String(visible++).padStart(5, '0')}`);
      const live = await changeToScreen(page, change, names, 'Paused');
      await page.close();
      say(`${first}; change → screen ${ms(median(live))} (max ${ms(Math.max(...live))})`);
    }
    if (ONLY_FIRST_ROWS) return;

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${url}/`);
    await page.locator('[data-vm]').first().waitFor({ timeout: 120_000 });
    // The rows come in the HTML before the scripts: type only once React has hydrated the box (its fiber is on it).
    // A function, not a string: Playwright polls a string predicate with eval in the page, which the CSP forbids.
    await page.waitForFunction(
      () => {
        const box = document.querySelector('[data-testid="vm-filter"]');
        return box !== null && Object.keys(box).some((k) => k.startsWith('__reactFiber'));
      },
      null,
      { timeout: 120_000 },
    );
    await filterLatency(page, keystrokes(['vm-0'])); // warm-up: the filter index's first build
    // SCALE_UI_PROFILE=file.cpuprofile: a CDP CPU profile of the typing (open it in DevTools' Performance panel);
    // the profiler slows the page, so the figures printed with it run high.
    const profileTo = process.env.SCALE_UI_PROFILE;
    const profiler = profileTo ? await page.context().newCDPSession(page) : undefined;
    if (profiler) {
      await profiler.send('Profiler.enable');
      await profiler.send('Profiler.setSamplingInterval', { interval: 200 });
      await profiler.send('Profiler.start');
    }
    // SCALE_UI_TRACE=file.json: a Chrome trace of the typing (DevTools' Performance panel or ui.perfetto.dev).
    const traceTo = process.env.SCALE_UI_TRACE;
    if (traceTo) await browser.startTracing(page, { path: traceTo, categories: TRACE_CATEGORIES });
    const { keys, floor } = await filterLatency(page, keystrokes(QUERIES));
    if (traceTo) {
      await browser.stopTracing();
      say(`trace of the typing: ${traceTo}`);
    }
    if (profiler && profileTo) {
      const { profile } = await profiler.send('Profiler.stop');
      writeFileSync(profileTo, JSON.stringify(profile));
      say(`CPU profile of the typing: ${profileTo}`);
    }
    const of = (pick: (k: KeystrokeTimes) => number) => {
      const xs = keys.map(pick);
      return `p95 ${p95(xs).toFixed(1)} ms (median ${median(xs).toFixed(1)})`;
    };
    const late = keys.filter((k) => k.pastTick > 1000 / 60).length;
    say(
      `${size} VMs: filter, ${keys.length} keystrokes: ${keys.length - late} of ${keys.length} painted in the ` +
        `frame after the key (≤ 16.7 ms past the first vsync after it; aim: all), ${of((k) => k.pastTick)}; the ` +
        `input event's work ${of((k) => k.handled)}, that frame's work ${of((k) => k.frameWork)}; → key painted ` +
        `${of((k) => k.painted)} against ${p95(floor).toFixed(1)} ms (median ${median(floor).toFixed(1)}) for the ` +
        `same wait with no key; → table updated and painted ${of((k) => k.table)}, max ` +
        `${Math.max(...keys.map((k) => k.table)).toFixed(1)} ms; load ${loadavg()[0]!.toFixed(1)}`,
    );
    await page.fill('[aria-label="Filter the resource tree"]', 'vm');
    await page.waitForFunction(() => document.querySelectorAll('#resource-tree .tree-more').length > 0, null, {
      timeout: 60_000,
    });
    const treeItems = await page.evaluate(() => document.querySelectorAll('#resource-tree li').length);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number };
    say(
      `${size} VMs: tab JS heap ${(heap.usedSize / 1048576).toFixed(0)} MiB used after GC (${(heap.totalSize / 1048576).toFixed(0)} MiB allocated); ` +
        `resource tree with every group open: ${treeItems} items in the DOM`,
    );
    await page.close();
  } finally {
    await proxy.close();
    await stopGroup(child);
    await sim.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = (process.env.SCALE_UI_SIZES ?? '10000,50000').split(',').map(Number);
  scaleUi(console.log, sizes).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
