// The first page over several clusters (registry.ts vmFirstPage): the union's first page in name order, the
// default cluster first among namesakes, the counts summed, and one answer kept while no cluster's page changes.
import { describe, expect, it } from 'vitest';
import type { VmRow } from '../schemas/vms';
import { ClusterRegistry } from './registry';
import type { CorralServices } from './services';
import type { FirstPage } from './vm-first-page';

const row = (name: string, context: string) => ({ name, namespace: 'demo', context }) as VmRow;

/** Services of one cluster whose fleet view answers `page()` (read at each call, so a test can change it). */
function cluster(context: string, page: () => FirstPage) {
  return {
    cluster: { info: { context } },
    deps: {},
    vms: { firstPage: (limit: number) => ({ ...page(), rows: page().rows.slice(0, limit) }) },
  } as unknown as CorralServices;
}

describe('ClusterRegistry.vmFirstPage', () => {
  it('is the first page of the clusters’ first pages, with their counts summed', () => {
    const home = {
      rows: [row('vm-2', 'home'), row('vm-10', 'home'), row('web', 'home')],
      total: 30,
      templates: 2,
      running: 4,
    };
    const lab = {
      rows: [row('app', 'lab'), row('vm-2', 'lab'), row('vm-3', 'lab')],
      total: 12,
      templates: 1,
      running: 5,
    };
    const registry = new ClusterRegistry([cluster('home', () => home), cluster('lab', () => lab)]);
    const page = registry.vmFirstPage(3);
    expect(page.rows.map((r) => `${r.context}/${r.name}`)).toEqual(['lab/app', 'home/vm-2', 'lab/vm-2']);
    expect([page.total, page.templates, page.running]).toEqual([42, 3, 9]);
  });

  it('answers with the same page while no cluster’s page changes, and a new one when one does', () => {
    let lab: FirstPage = { rows: [row('b', 'lab')], total: 1, templates: 0, running: 0 };
    const home: FirstPage = { rows: [row('c', 'home')], total: 1, templates: 0, running: 1 };
    const pages = new Map<string, FirstPage>();
    // The fleet view hands out the same page object until its fleet changes.
    const cached = (key: string, page: () => FirstPage) => () => {
      const now = page();
      const before = pages.get(key);
      if (before && before.rows === now.rows) return before;
      pages.set(key, now);
      return now;
    };
    const registry = new ClusterRegistry([
      { ...cluster('home', () => home), vms: { firstPage: cached('home', () => home) } } as unknown as CorralServices,
      { ...cluster('lab', () => lab), vms: { firstPage: cached('lab', () => lab) } } as unknown as CorralServices,
    ]);
    const first = registry.vmFirstPage(2);
    expect(registry.vmFirstPage(2)).toBe(first);
    lab = { rows: [row('a', 'lab'), row('b', 'lab')], total: 2, templates: 0, running: 0 };
    const next = registry.vmFirstPage(2);
    expect(next).not.toBe(first);
    expect(next.rows.map((r) => r.name)).toEqual(['a', 'b']);
    expect(next.total).toBe(3);
  });
});
