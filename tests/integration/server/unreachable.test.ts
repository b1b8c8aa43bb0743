/**
 * An unreachable or failing cluster: requests that need it fail fast with 5xx {"error"} (never hang), reads keep
 * being served from the cache, /readyz turns 503 after the grace period, and the watches recover afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ requestTimeoutMs: 800, unreachableAfterMs: 1000 });
  expect((await h.post('/api/vms', { name: 'before', image: 'fedora' })).status).toBe(201);
});
afterAll(async () => {
  await h?.close();
});

describe('unreachable cluster', () => {
  it('a hanging apiserver gives 504 within the request timeout, not a hang', async () => {
    h.sim.faults.stopAnswering('hang');
    h.sim.faults.dropWatches();
    try {
      const started = Date.now();
      const r = await h.post('/api/vms', { name: 'during-hang', image: 'fedora' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(r.status).toBe(504);
      expect(r.body).toEqual({ error: expect.stringContaining('did not answer') });
      const images = await h.get('/api/images'); // reads the corral-sources ConfigMap live
      expect(images.status).toBe(504);
      const cached = await h.get('/api/vms'); // served from the watch cache
      expect(cached.status).toBe(200);
      expect(cached.text).toContain('"name":"before"');
    } finally {
      h.sim.faults.resumeAnswering();
    }
  });

  it('a refusing apiserver gives 503; readiness drops and comes back', async () => {
    h.sim.faults.stopAnswering('refuse');
    h.sim.faults.dropWatches();
    try {
      const r = await h.post('/api/vms/tailvm/before/tags', { tag: 'x', on: true });
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: expect.stringContaining('cannot reach the cluster') });
      await eventually(async () => (await h.get('/readyz')).status === 503, 15_000, 'readyz 503');
    } finally {
      h.sim.faults.resumeAnswering();
    }
    await eventually(async () => (await h.get('/readyz')).status === 200, 20_000, 'readyz 200 again');
    expect((await h.post('/api/vms/tailvm/before/tags', { tag: 'back', on: true })).status).toBe(200);
    await eventually(async () => (await h.get('/api/vms')).text.includes('"back"'), 10_000, 'watch resumed');
  });

  it('apiserver 5xx answers map to 502/503', async () => {
    h.sim.faults.failRequests(1, 500);
    try {
      const r = await h.post('/api/vms/tailvm/before/tags', { tag: 'y', on: true });
      expect(r.status).toBe(502);
      expect(Object.keys(r.body as object)).toEqual(['error']);
    } finally {
      h.sim.faults.clear();
    }
  });
});
