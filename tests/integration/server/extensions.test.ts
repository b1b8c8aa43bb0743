/**
 * Extensions on the embedded cluster: the catalog merged with installed state, install by server-side apply of
 * labelled objects (field manager corral) that turns capabilities.bootc true, idempotent re-install, uninstall that
 * removes exactly the labelled objects (and reports one edited by hand), 404/409/403/400 for bad requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import type { ExtensionRow } from '@/server/schemas/extensions';

const NS = 'ext-ns';
const LABEL = 'corral.dev/extension';
const RBAC = 'rbac.authorization.k8s.io';
const KINDS = ['/serviceaccounts', `${RBAC}/roles`, `${RBAC}/rolebindings`];

let sim: EmbeddedCluster;
let corral: RunningCorral;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(corral.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const labelled = () =>
  KINDS.flatMap((k) =>
    sim.store
      .list(k, NS)
      .filter((o) => o.metadata.labels?.[LABEL] === 'bootc')
      .map((o) => `${k}/${o.metadata.name}`),
  );

async function bootc(): Promise<{ bootc: boolean; bootcWhyNot: string[] }> {
  return (await call('GET', '/api/capabilities')).body as { bootc: boolean; bootcWhyNot: string[] };
}

async function taskLog(id: string): Promise<string[]> {
  const task = (await call('GET', `/api/tasks/${id}`)).body as { log: string; status: string };
  expect(task.status).toBe('done');
  // Each log line is "HH:MM:SS text".
  return task.log.split('\n').map((line) => line.replace(/^\d\d:\d\d:\d\d /, ''));
}

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
  sim.store.create('/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    config: { defaultNamespace: NS, pollMs: 50, waitTimeoutMs: 30_000 },
  });
  await corral.cluster.cache.waitForSync(20_000);
});

afterAll(async () => {
  await corral?.close();
  await sim?.close();
});

describe('extensions', () => {
  it('lists the catalog with what each installs and needs, none installed', async () => {
    const r = await call('GET', '/api/plugins');
    expect(r.status).toBe(200);
    const rows = r.body as unknown as ExtensionRow[];
    expect(rows.find((x) => x.name === 'bootc')).toMatchObject({
      version: '0.1.0',
      installed: false,
      inStore: true,
      installs: expect.arrayContaining([expect.stringContaining('ServiceAccount corral-bootc-builder')]),
      needs: expect.arrayContaining([expect.stringContaining('CDI')]),
    });
    const caps = await bootc();
    expect(caps.bootc).toBe(false);
    expect(caps.bootcWhyNot).toEqual([expect.stringContaining('bootc extension is not installed')]);
  });

  it('refuses unknown names (404), non-admins (403), unknown fields (400) and removing what is not installed (409)', async () => {
    expect(await call('POST', '/api/plugins/nope/install')).toMatchObject({
      status: 404,
      body: { error: expect.stringContaining('no extension named nope') },
    });
    expect((await call('DELETE', '/api/plugins/nope')).status).toBe(404);
    expect(await call('DELETE', '/api/plugins/bootc')).toMatchObject({
      status: 409,
      body: { error: 'extension bootc is not installed' },
    });
    expect(await call('POST', '/api/plugins/Bad_Name/install')).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('name') },
    });
    expect(await call('POST', '/api/plugins/bootc/install', { colour: 'red' })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('colour') },
    });
    process.env.CORRAL_ADMINS = 'alice@github';
    try {
      const mallory = { 'tailscale-user-login': 'mallory@github' };
      expect((await call('POST', '/api/plugins/bootc/install', undefined, mallory)).status).toBe(403);
      expect((await call('GET', '/api/plugins', undefined, mallory)).status).toBe(200);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
    expect(labelled()).toEqual([]);
  });

  it('installs bootc by server-side apply, labelled, and capabilities.bootc turns true; again is idempotent', async () => {
    const r = await call('POST', '/api/plugins/bootc/install');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      installed: 'bootc',
      applied: [
        `applied ServiceAccount ${NS}/corral-bootc-builder`,
        `applied Role ${NS}/corral-bootc-builder`,
        `applied RoleBinding ${NS}/corral-bootc-builder`,
      ],
    });
    expect(await taskLog(String(r.body.task))).toEqual(expect.arrayContaining(r.body.applied as string[]));
    expect(labelled().sort()).toEqual([
      '/serviceaccounts/corral-bootc-builder',
      `${RBAC}/rolebindings/corral-bootc-builder`,
      `${RBAC}/roles/corral-bootc-builder`,
    ]);
    const sa = sim.store.get('/serviceaccounts', NS, 'corral-bootc-builder')!;
    expect(sa).toMatchObject({ automountServiceAccountToken: false });
    const state = sim.store.get('/configmaps', NS, 'corral-extensions')!;
    expect(JSON.parse((state as unknown as { data: Record<string, string> }).data['installed.json']!)).toMatchObject({
      bootc: { version: '0.1.0' },
    });
    expect(await bootc()).toEqual(expect.objectContaining({ bootc: true, bootcWhyNot: [] }));
    const rows = (await call('GET', '/api/plugins')).body as unknown as ExtensionRow[];
    expect(rows.find((x) => x.name === 'bootc')).toMatchObject({ installed: true, installedVersion: '0.1.0' });

    // Idempotent: the same answer, the same objects, no duplicates; a hand-removed object comes back.
    sim.store.delete(`${RBAC}/roles`, NS, 'corral-bootc-builder');
    const again = await call('POST', '/api/plugins/bootc/install');
    expect(again.status).toBe(200);
    expect(again.body.installed).toBe('bootc');
    expect(labelled()).toHaveLength(3);
  });

  it('uninstall removes exactly the labelled objects, reports one edited by hand, and bootc turns false', async () => {
    sim.store.create('/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'someone-else', namespace: NS, labels: { [LABEL]: 'other' } },
    });
    // An admin took the RoleBinding over: it lost the label, so it is not Corral's to delete any more.
    sim.store.mutate(`${RBAC}/rolebindings`, NS, 'corral-bootc-builder', (o) => {
      delete o.metadata.labels![LABEL];
    });
    const r = await call('DELETE', '/api/plugins/bootc');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'removed',
      removed: [`removed ServiceAccount ${NS}/corral-bootc-builder`, `removed Role ${NS}/corral-bootc-builder`],
      left: [expect.stringMatching(/^left RoleBinding ext-ns\/corral-bootc-builder: it no longer carries/)],
    });
    expect(await taskLog(String(r.body.task))).toEqual(
      expect.arrayContaining([...(r.body.removed as string[]), ...(r.body.left as string[])]),
    );
    expect(labelled()).toEqual([]);
    expect(sim.store.get(`${RBAC}/rolebindings`, NS, 'corral-bootc-builder')).toBeDefined();
    expect(sim.store.get('/serviceaccounts', NS, 'someone-else')).toBeDefined();
    const caps = await bootc();
    expect(caps.bootc).toBe(false);
    const rows = (await call('GET', '/api/plugins')).body as unknown as ExtensionRow[];
    expect(rows.find((x) => x.name === 'bootc')).toMatchObject({ installed: false });
  });
});
