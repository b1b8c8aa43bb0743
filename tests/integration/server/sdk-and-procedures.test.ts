/**
 * The typed SDK over /trpc, procedures through createCaller (no HTTP), the live.fleet subscription and the
 * OpenAPI drift check.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@/server/openapi';
import { appRouter } from '@/server/routers/_app';
import type { FleetEvent } from '@/server/schemas/live';
import { createCorralClient } from '@/server/sdk';
import { createCallerFactory, createContextInner } from '@/server/trpc';
import { eventually, readTrackedEvents, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const createCaller = createCallerFactory(appRouter);
const admin = { login: 'alice', name: 'Alice', admin: true, enforced: true };
const viewer = { login: 'bob', name: 'Bob', admin: false, enforced: true };

describe('procedures via createCaller', () => {
  it('create, list and whoami without a port', async () => {
    const caller = createCaller(createContextInner({ services: h.corral.services, identity: admin }));
    await expect(caller.vms.create({ name: 'caller-vm', image: 'cirros' })).resolves.toMatchObject({
      name: 'caller-vm',
      namespace: 'tailvm',
    });
    await eventually(async () => (await caller.vms.list()).some((v) => v.name === 'caller-vm'), 5000, 'row');
    expect(await caller.whoami()).toMatchObject({ login: 'alice', admin: true, demo: true });
    const task = (await caller.tasks.list())[0];
    expect(task).toMatchObject({ action: 'create', target: 'tailvm/caller-vm', caller: 'alice', status: 'done' });
  });

  it('maps domain errors to tRPC codes and refuses read-only callers', async () => {
    const caller = createCaller(createContextInner({ services: h.corral.services, identity: admin }));
    await expect(caller.vms.get({ namespace: 'tailvm', name: 'ghost' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      caller.vms.action({ namespace: 'tailvm', name: 'caller-vm', action: 'unpause' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const ro = createCaller(createContextInner({ services: h.corral.services, identity: viewer }));
    await expect(ro.vms.setTag({ namespace: 'tailvm', name: 'caller-vm', tag: 'x', on: true })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(ro.vms.list()).resolves.toBeInstanceOf(Array);
  });
});

describe('SDK over /trpc', () => {
  it('queries and mutates with types from AppRouter', async () => {
    const corral = createCorralClient(h.url);
    const caps = await corral.capabilities.query();
    expect(caps.demo).toBe(true);
    await corral.vms.setTag.mutate({ namespace: 'tailvm', name: 'caller-vm', tag: 'sdk', on: true });
    const vms = await eventually(
      async () => (await corral.vms.list.query({ tag: 'sdk' })).filter((v) => v.name === 'caller-vm').length === 1,
      5000,
      'tag',
    );
    expect(vms).toBe(true);
    await expect(corral.vms.get.query({ namespace: 'tailvm', name: 'ghost' })).rejects.toMatchObject({
      data: { code: 'NOT_FOUND' },
    });
  });

  it('refuses a cross-site mutation over /trpc too', async () => {
    const corral = createCorralClient(h.url, { headers: { origin: 'https://evil.example' } });
    await expect(
      corral.vms.setTag.mutate({ namespace: 'tailvm', name: 'caller-vm', tag: 'evil', on: true }),
    ).rejects.toMatchObject({ data: { code: 'FORBIDDEN' } });
  });

  it('live.fleet over SSE: a snapshot first, then deltas with ids', async () => {
    const abort = new AbortController();
    const res = await fetch(`${h.url}/trpc/live.fleet`, {
      signal: abort.signal,
      headers: { accept: 'text/event-stream' },
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: { id: string; data: FleetEvent }[] = [];
    const pump = readTrackedEvents<FleetEvent>(res.body!, (id, data) => events.push({ id, data }));
    try {
      const first = await eventually(() => events[0], 5000, 'snapshot');
      expect(first.data).toMatchObject({
        type: 'snapshot',
        demo: true,
        ready: true,
        vms: expect.any(Array),
        nodes: expect.any(Array),
        tasks: expect.any(Array),
      });
      await h.post('/api/vms/tailvm/caller-vm/tags', { tag: 'live', on: true });
      const delta = await eventually(
        () => events.find((e) => e.data.type === 'vm' && e.data.op === 'upsert' && e.data.vm.tags.includes('live')),
        5000,
        'vm delta',
      );
      expect(delta.id).toMatch(/^[a-z0-9]+-\d+$/);
      expect(events.some((e) => e.data.type === 'task')).toBe(true);
    } finally {
      abort.abort();
      await pump;
    }
  });

  it('live.fleet resumes after lastEventId with only the missed events', async () => {
    const live = h.corral.services.live;
    const from = live.currentId();
    await h.post('/api/vms/tailvm/caller-vm/tags', { tag: 'resume', on: true });
    const missed = await eventually(
      () => {
        const m = live.since(from);
        return m?.some((e) => e.event.type === 'vm') ? m : undefined;
      },
      5000,
      'missed events',
    );
    expect(missed.every((e) => e.event.type !== 'snapshot')).toBe(true);
    expect(live.since('otherepoch-1')).toBeUndefined();
  });
});

describe('OpenAPI', () => {
  it('docs/openapi.json matches the procedures (run `npm run openapi` after changing a procedure)', () => {
    const committed = JSON.parse(
      readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'),
    ) as unknown;
    expect(buildOpenApiDocument()).toEqual(committed);
  });

  it('documents real success statuses and the {"error"} envelope', () => {
    const doc = buildOpenApiDocument() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths['/vms']!.post!.responses)).toEqual(expect.arrayContaining(['201', '202', '400']));
    expect(Object.keys(doc.paths['/vms/{namespace}/{name}/migrate']!.post!.responses)).toContain('202');
    expect(JSON.stringify(doc.paths['/vms']!.post!.responses['400'])).toContain('#/components/schemas/Error');
    expect(doc.components.schemas.Error).toEqual({
      type: 'object',
      properties: { error: { type: 'string' } },
      required: ['error'],
    });
    expect(Object.keys(doc.components.schemas).some((k) => k.startsWith('error.'))).toBe(false);
  });
});
