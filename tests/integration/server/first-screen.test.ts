/**
 * The Datacenter's first screen (docs/scale.md, "First rows from the HTML"): `GET /api/vms?limit=N` carries the whole
 * list's counts and follows every change of the fleet although it is kept per fleet version, and the source the
 * root layout renders the first rows from (http/first-screen.ts, read through the UI's lib/first-screen.ts) answers
 * the same rows as the REST lists, only for a document request of `/`.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FIRST_SCREEN_HEADER as UI_HEADER,
  FIRST_SCREEN_ROWS,
  FIRST_SCREEN_SOURCES as UI_SOURCES,
  firstScreenFor,
} from '@/app/lib/first-screen';
import { FIRST_SCREEN_HEADER, FIRST_SCREEN_SOURCES, firstScreenRoute } from '@/server/http/first-screen';
import type { VmRow } from '@/server/schemas/vms';
import { resourceKey } from '@/sim/store/types';
import { eventually, startHarness, type Harness } from './harness';

const VMS = resourceKey('kubevirt.io', 'virtualmachines');

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 30, speed: 50 });
}, 90_000);
afterAll(async () => {
  await h?.close();
});

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
const byName = (a: VmRow, b: VmRow) => collator.compare(a.name, b.name) || collator.compare(a.namespace, b.namespace);
const keys = (rows: VmRow[]) => rows.map((r) => `${r.namespace}/${r.name}`);

async function firstPage(limit: number) {
  const res = await fetch(`${h.url}/api/vms?limit=${limit}`);
  expect(res.status).toBe(200);
  return {
    rows: (await res.json()) as VmRow[],
    total: res.headers.get('corral-vm-total'),
    templates: res.headers.get('corral-vm-templates'),
    running: res.headers.get('corral-vm-running'),
  };
}

async function everyVm(): Promise<VmRow[]> {
  return (await (await fetch(`${h.url}/api/vms`)).json()) as VmRow[];
}

function request(method: string, url: string, headers: Record<string, string> = {}): IncomingMessage {
  return { method, url, headers: { ...headers } } as unknown as IncomingMessage;
}

describe('the first page', () => {
  it('carries how many VMs the whole list holds, how many are templates and how many others run', async () => {
    const all = await everyVm();
    const page = await firstPage(5);
    expect(keys(page.rows)).toEqual(keys([...all].sort(byName).slice(0, 5)));
    expect(page.total).toBe(String(all.length));
    expect(page.templates).toBe(String(all.filter((v) => v.template).length));
    expect(page.running).toBe(String(all.filter((v) => !v.template && v.status === 'Running').length));
    expect(Number(page.running)).toBeGreaterThan(0);
  });

  it('follows the fleet: a VM that sorts first appears on it and in its counts, and goes when deleted', async () => {
    const before = await firstPage(5);
    const namespace = before.rows[0]!.namespace;
    h.sim.store.create(VMS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'aaa-first', namespace },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    });
    const added = await eventually(
      async () => {
        const page = await firstPage(5);
        return page.rows[0]?.name === 'aaa-first' ? page : undefined;
      },
      15_000,
      'the new VM on the first page',
    );
    expect(added.total).toBe(String(Number(before.total) + 1));
    expect(keys(added.rows.slice(1))).toEqual(keys(before.rows.slice(0, 4)));
    h.sim.store.delete(VMS, namespace, 'aaa-first');
    const gone = await eventually(
      async () => {
        const page = await firstPage(5);
        return page.rows[0]?.name !== 'aaa-first' ? page : undefined;
      },
      15_000,
      'the deleted VM gone from the first page',
    );
    expect(gone.total).toBe(before.total);
    expect(keys(gone.rows)).toEqual(keys(before.rows));
  });

  it('with a filter beside the limit is picked from the filtered rows, without the counts', async () => {
    const all = await everyVm();
    const namespace = all[0]!.namespace;
    const res = await fetch(`${h.url}/api/vms?limit=3&namespace=${namespace}`);
    expect(res.status).toBe(200);
    expect(keys((await res.json()) as VmRow[])).toEqual(
      keys(
        all
          .filter((v) => v.namespace === namespace)
          .sort(byName)
          .slice(0, 3),
      ),
    );
    expect(res.headers.get('corral-vm-total')).toBeNull();
  });
});

describe('the first screen the layout renders', () => {
  it('is spelled the same on both sides', () => {
    expect(UI_HEADER).toBe(FIRST_SCREEN_HEADER);
    expect(UI_SOURCES).toBe(FIRST_SCREEN_SOURCES);
  });

  it('is asked for only by a document request of /, and whatever a client sent under its header is dropped', () => {
    const route = firstScreenRoute(h.corral.services);
    try {
      const marked = (req: IncomingMessage) => (route.mark(req), req.headers[FIRST_SCREEN_HEADER]);
      const id = marked(request('GET', '/'));
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(marked(request('GET', '/?q=tag:prod'))).toBe(id);
      expect(marked(request('GET', '/vms/demo/web', { [FIRST_SCREEN_HEADER]: 'forged' }))).toBeUndefined();
      expect(marked(request('GET', '/', { rsc: '1' }))).toBeUndefined();
      expect(marked(request('HEAD', '/'))).toBeUndefined();
      expect(marked(request('GET', '/', { [FIRST_SCREEN_HEADER]: 'forged' }))).toBe(id);
    } finally {
      route.close();
    }
  });

  it('holds the REST first page with its counts, every node and every CT; nothing once closed', async () => {
    const route = firstScreenRoute(h.corral.services);
    const req = request('GET', '/');
    route.mark(req);
    const id = req.headers[FIRST_SCREEN_HEADER] as string;
    try {
      const seed = firstScreenFor(id);
      expect(seed).toBeDefined();
      const page = await firstPage(FIRST_SCREEN_ROWS);
      expect(seed!.vms).toHaveLength(Math.min(FIRST_SCREEN_ROWS, Number(page.total)));
      expect(seed!.vms).toEqual(page.rows);
      expect(String(seed!.total)).toBe(page.total);
      expect(String(seed!.templates)).toBe(page.templates);
      expect(String(seed!.running)).toBe(page.running);
      expect(seed!.nodes).toEqual(await (await fetch(`${h.url}/api/nodes`)).json());
      expect(seed!.cts).toEqual(await (await fetch(`${h.url}/api/cts`)).json());
      expect(firstScreenFor('another-id')).toBeUndefined();
      expect(firstScreenFor(null)).toBeUndefined();
    } finally {
      route.close();
    }
    expect(firstScreenFor(id)).toBeUndefined();
  });
});
