import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  earliestPosition,
  EARLY_PREFILL_KEY,
  EARLY_PREFILL_SCRIPT,
  earlyPrefillScript,
  FIRST_PAGE,
  PREFILL_PATHS,
  takePrefill,
  type EarlyPrefill,
} from './prefill';

const VMS = [{ name: 'web', namespace: 'demo' }];
const PAGE = [{ name: 'a-first', namespace: 'demo' }];
const NODES = [{ name: 'node-1' }];
const CTS = [{ name: 'box', namespace: 'demo' }];
const FIRST_PATH = `${PREFILL_PATHS.vms}?limit=${FIRST_PAGE}`;

/** A fetch that answers the prefill paths (or `status` for every path), each list at its own position. */
function fakeFetch(
  status = 200,
  positions: Record<string, string | null> = {},
  counts: Record<string, string> = {
    'corral-vm-total': '5000',
    'corral-vm-templates': '3',
    'corral-vm-running': '2500',
  },
) {
  const asked: { path: string; accept: string | undefined }[] = [];
  let parses = 0;
  const fetch = vi.fn((path: string, init?: { headers?: Record<string, string> }) => {
    asked.push({ path, accept: init?.headers?.accept });
    const body =
      path === FIRST_PATH ? PAGE : path === PREFILL_PATHS.vms ? VMS : path === PREFILL_PATHS.cts ? CTS : NODES;
    const position = path in positions ? positions[path] : 'e1-7';
    return Promise.resolve({
      ok: status < 300,
      status,
      headers: {
        get: (name: string) =>
          name === 'corral-live-position' ? position : path === FIRST_PATH ? (counts[name] ?? null) : null,
      },
      json: () => {
        parses++;
        return Promise.resolve(body);
      },
    });
  });
  return { fetch, asked, parses: () => parses };
}

/** Runs the early script against `fetch`, at `pathname`, and returns what it parked. */
function runEarly(
  fetch: unknown,
  pathname = '/',
  script = EARLY_PREFILL_SCRIPT,
): Record<string, EarlyPrefill | undefined> {
  const win: Record<string, unknown> = { location: { pathname } };
  // The script's free identifiers `window` and `fetch` become these parameters.
  new Function('window', 'fetch', script)(win, fetch);
  return win as Record<string, EarlyPrefill | undefined>;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('early prefill script', () => {
  it('on the Datacenter asks for the first page first, then the three lists, and parks them on window', async () => {
    const { fetch, asked } = fakeFetch();
    const win = runEarly(fetch);
    expect(asked).toEqual([
      { path: FIRST_PATH, accept: 'application/json' },
      { path: '/api/vms', accept: 'application/json' },
      { path: '/api/nodes', accept: 'application/json' },
      { path: '/api/cts', accept: 'application/json' },
    ]);
    const early = win[EARLY_PREFILL_KEY]!;
    await expect(early.first).resolves.toEqual({ rows: PAGE, total: 5000, templates: 3, running: 2500 });
    await expect(early.nodes).resolves.toEqual({ rows: NODES, position: 'e1-7' });
    await expect(early.cts).resolves.toEqual({ rows: CTS, position: 'e1-7' });
    // The VM list stays unparsed until the provider wants it.
    expect((await early.vms).status).toBe(200);
  });

  it('asks for no first page where the server rendered it into the HTML', () => {
    const { fetch, asked } = fakeFetch();
    expect(runEarly(fetch, '/', earlyPrefillScript(false))[EARLY_PREFILL_KEY]!.first).toBeUndefined();
    expect(asked.map((a) => a.path)).toEqual(['/api/vms', '/api/nodes', '/api/cts']);
  });

  it('leaves the counts null when the first page does not carry them', async () => {
    const { fetch } = fakeFetch(200, {}, { 'corral-vm-total': 'many' });
    await expect(runEarly(fetch)[EARLY_PREFILL_KEY]!.first).resolves.toEqual({
      rows: PAGE,
      total: null,
      templates: null,
      running: null,
    });
  });

  it('asks for no first page on other pages', () => {
    const { fetch, asked } = fakeFetch();
    expect(runEarly(fetch, '/vm/demo/web')[EARLY_PREFILL_KEY]!.first).toBeUndefined();
    expect(asked.map((a) => a.path)).toEqual(['/api/vms', '/api/nodes', '/api/cts']);
  });

  it('parks rejections naming the path when the server refuses', async () => {
    const { fetch } = fakeFetch(503);
    const early = runEarly(fetch)[EARLY_PREFILL_KEY]!;
    await expect(early.vms).rejects.toThrow('/api/vms: 503');
    await expect(early.first).rejects.toThrow(`${FIRST_PATH}: 503`);
  });
});

describe('takePrefill', () => {
  it('uses the early requests until released, then asks the server itself (without a first page)', async () => {
    const { fetch, asked, parses } = fakeFetch(200, { [PREFILL_PATHS.nodes]: 'e1-5' });
    const win = runEarly(fetch);
    asked.length = 0;
    vi.stubGlobal('fetch', fetch);

    const first = takePrefill(new AbortController().signal, win);
    // The Datacenter counts templates apart: 5,000 VMs of which 3 templates are 4,997 in its count.
    await expect(first.first).resolves.toEqual({
      vms: PAGE,
      nodes: NODES,
      cts: CTS,
      counts: { total: 4997, running: 2500 },
    });
    // A second effect run (React's development double mount) finds the same requests and shares the one parse.
    const again = takePrefill(new AbortController().signal, win);
    const expected = { vms: VMS, nodes: NODES, cts: CTS, position: 'e1-5' };
    await expect(first.lists()).resolves.toEqual(expected);
    await expect(again.lists()).resolves.toEqual(expected);
    expect(asked).toEqual([]);

    first.release();
    const later = takePrefill(new AbortController().signal, win);
    expect(later.first).toBeUndefined();
    await expect(later.lists()).resolves.toEqual(expected);
    expect(asked.map((a) => a.path)).toEqual(['/api/vms', '/api/nodes', '/api/cts']);
    expect(parses()).toBe(4 + 3); // the early page, VMs (once), nodes and CTs; then the three lists again
  });

  it('parses the VM list only after `after` has settled', async () => {
    const { fetch, parses } = fakeFetch();
    const win = runEarly(fetch);
    await win[EARLY_PREFILL_KEY]!.first;
    await win[EARLY_PREFILL_KEY]!.cts;
    await win[EARLY_PREFILL_KEY]!.nodes;
    const before = parses();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const lists = takePrefill(new AbortController().signal, win).lists(gate);
    await new Promise((r) => setTimeout(r, 5));
    expect(parses()).toBe(before);
    open();
    await expect(lists).resolves.toMatchObject({ vms: VMS });
    expect(parses()).toBe(before + 1);
  });

  it('has no position when a list did not carry one', async () => {
    vi.stubGlobal('fetch', fakeFetch(200, { [PREFILL_PATHS.cts]: null }).fetch);
    const lists = await takePrefill(new AbortController().signal, {}).lists();
    expect(lists).toEqual({ vms: VMS, nodes: NODES, cts: CTS });
  });

  it('reports a refused list with its path and status', async () => {
    vi.stubGlobal('fetch', fakeFetch(403).fetch);
    await expect(takePrefill(new AbortController().signal, {}).lists()).rejects.toThrow('/api/vms: 403');
  });
});

describe('earliestPosition', () => {
  it('takes the lowest sequence of one epoch, by number', () => {
    expect(earliestPosition(['e1-10', 'e1-9', 'e1-11'])).toBe('e1-9');
    expect(earliestPosition(['m-lab-3', 'm-lab-2'])).toBe('m-lab-2');
  });

  it('has none when a position is missing or malformed, or the epochs differ (a restart between answers)', () => {
    expect(earliestPosition(['e1-1', null])).toBeUndefined();
    expect(earliestPosition(['e1-1', 'e2-1'])).toBeUndefined();
    expect(earliestPosition(['e1-x'])).toBeUndefined();
    expect(earliestPosition(['-1'])).toBeUndefined();
    expect(earliestPosition([])).toBeUndefined();
  });
});
