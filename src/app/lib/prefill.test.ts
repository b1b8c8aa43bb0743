import { afterEach, describe, expect, it, vi } from 'vitest';
import { EARLY_PREFILL_KEY, EARLY_PREFILL_SCRIPT, PREFILL_PATHS, takePrefill, type PrefillLists } from './prefill';

const VMS = [{ name: 'web', namespace: 'demo' }];
const NODES = [{ name: 'node-1' }];
const CTS = [{ name: 'box', namespace: 'demo' }];

/** A fetch that answers the three prefill paths (or `status` for every path) and records what was asked. */
function fakeFetch(status = 200) {
  const asked: { path: string; accept: string | undefined }[] = [];
  const fetch = vi.fn((path: string, init?: { headers?: Record<string, string> }) => {
    asked.push({ path, accept: init?.headers?.accept });
    const body = path === PREFILL_PATHS.vms ? VMS : path === PREFILL_PATHS.cts ? CTS : NODES;
    return Promise.resolve({ ok: status < 300, status, json: () => Promise.resolve(body) });
  });
  return { fetch, asked };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('early prefill script', () => {
  it('starts the three list requests and parks their parsed answers on window', async () => {
    const { fetch, asked } = fakeFetch();
    const win: Record<string, unknown> = {};
    // The script's free identifiers `window` and `fetch` become these parameters.
    new Function('window', 'fetch', EARLY_PREFILL_SCRIPT)(win, fetch);
    expect(asked).toEqual([
      { path: '/api/vms', accept: 'application/json' },
      { path: '/api/nodes', accept: 'application/json' },
      { path: '/api/cts', accept: 'application/json' },
    ]);
    await expect(win[EARLY_PREFILL_KEY]).resolves.toEqual([VMS, NODES, CTS]);
  });

  it('parks a rejection naming the path when the server refuses', async () => {
    const { fetch } = fakeFetch(503);
    const win: Record<string, unknown> = {};
    new Function('window', 'fetch', EARLY_PREFILL_SCRIPT)(win, fetch);
    await expect(win[EARLY_PREFILL_KEY]).rejects.toThrow('/api/vms: 503');
  });
});

describe('takePrefill', () => {
  it('uses the early requests until released, then asks the server itself', async () => {
    const { fetch, asked } = fakeFetch();
    vi.stubGlobal('fetch', fetch);
    const early = Promise.resolve([[{ name: 'early' }], [], []] as unknown as PrefillLists);
    const win = { [EARLY_PREFILL_KEY]: early };

    const first = takePrefill(new AbortController().signal, win);
    // A second effect run (React's development double mount) finds the same requests.
    expect(takePrefill(new AbortController().signal, win).lists).toBe(early);
    await expect(first.lists).resolves.toEqual([[{ name: 'early' }], [], []]);
    expect(asked).toEqual([]);

    first.release();
    const later = takePrefill(new AbortController().signal, win);
    await expect(later.lists).resolves.toEqual([VMS, NODES, CTS]);
    expect(asked.map((a) => a.path)).toEqual(['/api/vms', '/api/nodes', '/api/cts']);
  });

  it('reports a refused list with its path and status', async () => {
    vi.stubGlobal('fetch', fakeFetch(403).fetch);
    await expect(takePrefill(new AbortController().signal, {}).lists).rejects.toThrow('/api/vms: 403');
  });
});
