/**
 * The fault injector's watch and read faults: expire every resourceVersion handed out (resuming watches get
 * ERROR 410 Expired, a fresh list works) and slow reads (lists and gets wait, watches and writes do not).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, startHarness, type Harness, type WireJson } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

/** Reads a watch stream's events until it ends (or `max` events). */
async function events(res: Response, max = Infinity): Promise<WireJson[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: WireJson[] = [];
  let buffered = '';
  while (out.length < max) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let cut: number;
    while ((cut = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 1);
      if (line.trim()) out.push(JSON.parse(line) as WireJson);
    }
  }
  await reader.cancel().catch(() => undefined);
  return out;
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

describe('watch faults', () => {
  it('expire-watches: open watches end, a resume from an old resourceVersion gets 410, a fresh list works', async () => {
    expect((await raw(h, 'POST', '/api/v1/namespaces/default/configmaps', configMap('before'))).status).toBe(201);
    const list = await raw(h, 'GET', '/api/v1/namespaces/default/configmaps');
    const rv = list.json.metadata.resourceVersion as string;
    const open = await fetch(`${h.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`);
    const ended = events(open);
    expect((await raw(h, 'POST', '/api/v1/namespaces/default/configmaps', configMap('after'))).status).toBe(201);

    const expired = await raw(h, 'POST', '/_sim/faults/expire-watches');
    expect(expired.status).toBe(200);
    expect(expired.json.dropped).toBeGreaterThanOrEqual(1);
    expect((await ended).map((e) => e.object.metadata.name)).toEqual(['after']); // then a clean end

    const resumed = await events(
      await fetch(`${h.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`),
    );
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });

    const fresh = (await raw(h, 'GET', '/api/v1/namespaces/default/configmaps')).json;
    expect(fresh.items.map((i: WireJson) => i.metadata.name)).toEqual(['after', 'before']);
    const again = await fetch(
      `${h.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${fresh.metadata.resourceVersion}`,
    );
    const next = events(again, 1);
    expect((await raw(h, 'POST', '/api/v1/namespaces/default/configmaps', configMap('later'))).status).toBe(201);
    expect((await next)[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'later' } } });
  });

  it('expireWatches in-process drops watches the same way', async () => {
    const res = await fetch(`${h.url}/api/v1/namespaces?watch=true`);
    const all = events(res);
    await new Promise((r) => setTimeout(r, 50));
    expect(h.cluster.faults.expireWatches()).toBeGreaterThanOrEqual(1);
    expect((await all).length).toBeGreaterThan(0);
  });

  it('slow lists: reads wait, watches and writes do not', async () => {
    expect((await raw(h, 'PATCH', '/_sim/faults', { listDelayMs: 400 })).json).toMatchObject({ listDelayMs: 400 });
    try {
      let started = Date.now();
      expect((await raw(h, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(380);
      started = Date.now();
      expect((await raw(h, 'GET', '/api/v1/namespaces/default/configmaps/before')).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(380);

      started = Date.now();
      expect((await raw(h, 'POST', '/api/v1/namespaces/default/configmaps', configMap('fast'))).status).toBe(201);
      expect(Date.now() - started).toBeLessThan(300);
      started = Date.now();
      const watch = await fetch(`${h.url}/api/v1/namespaces/default/configmaps?watch=true`);
      expect(watch.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(300);
      await watch.body?.cancel();
    } finally {
      h.cluster.faults.clear();
    }
    expect(h.cluster.faults.get().listDelayMs).toBe(0);
  });

  it('refuses a bad listDelayMs and counts it as a known setting', async () => {
    expect((await raw(h, 'POST', '/_sim/faults', { listDelayMs: -1 })).status).toBe(400);
    expect((await raw(h, 'POST', '/_sim/faults', { listDelayMs: 'slow' })).status).toBe(400);
    expect((await raw(h, 'GET', '/_sim/faults/expire-watches')).status).toBe(405);
    h.cluster.faults.slowLists(10);
    expect(h.cluster.faults.get().listDelayMs).toBe(10);
    h.cluster.faults.clear();
  });
});
