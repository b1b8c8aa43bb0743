/**
 * The doctor against an embedded cluster started with pieces missing: KubeVirt feature gates off, no
 * VolumeSnapshotClass, no metrics-server, Corral's namespace absent, a corrupt sources ConfigMap, and (through a
 * second Corral) a ServiceAccount that lacks some verbs. Each is the right row; the fixable ones are fixed by
 * POST /api/doctor/fix (tasks that say what they changed) and read green afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import type { DoctorCheck } from '@/server/schemas/doctor';

const KUBEVIRT = 'kubevirt.io/kubevirts';
const VSC = 'snapshot.storage.k8s.io/volumesnapshotclasses';
const CONFIGMAPS = '/configmaps';
const NS = 'doctor-ns';

let sim: EmbeddedCluster;
let corral: RunningCorral;

async function call(
  c: RunningCorral,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(c.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

async function checks(c: RunningCorral = corral): Promise<Map<string, DoctorCheck>> {
  const r = await call(c, 'GET', '/api/doctor?refresh=true');
  expect(r.status).toBe(200);
  return new Map((r.body as DoctorCheck[]).map((row) => [row.name, row]));
}

const gates = () =>
  (
    sim.store.get(KUBEVIRT, 'kubevirt', 'kubevirt') as unknown as {
      spec: { configuration: { developerConfiguration: { featureGates: string[] } } };
    }
  ).spec.configuration.developerConfiguration.featureGates;

beforeAll(async () => {
  sim = await startEmbeddedCluster({
    port: 0,
    fleet: 'empty',
    speed: 50,
    metricsServer: false,
    // The user's own gate list (LiveMigration, CPUManager) must survive the fix.
    baseline: { featureGates: ['LiveMigration', 'CPUManager'], snapshotClass: false },
  });
  corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    config: { defaultNamespace: NS, pollMs: 50, waitTimeoutMs: 30_000 },
    // Long enough that the heartbeat, which creates a missing namespace for its Lease, does not renew in this file.
    replica: { leaseSeconds: 600 },
  });
  await corral.cluster.cache.waitForSync(20_000);
  // Corral's first heartbeat created its namespace; take it away again, as an admin who deleted it would.
  expect(sim.store.get('/namespaces', undefined, NS)).toBeDefined();
  sim.store.delete('/namespaces', undefined, NS);
});

afterAll(async () => {
  await corral?.close();
  await sim?.close();
});

describe('doctor on a cluster with pieces missing', () => {
  it('reports each missing piece as the right row', async () => {
    const rows = await checks();
    expect(rows.get('api')).toMatchObject({ status: 'ok', message: expect.stringContaining('v1.32.0') });
    expect(rows.get('kubevirt')).toMatchObject({ status: 'ok', fixable: false });
    expect(rows.get('cdi')).toMatchObject({ status: 'ok' });
    expect(rows.get('gate-snapshot')).toMatchObject({
      area: 'kubevirt',
      status: 'fail',
      fixable: true,
      message: expect.stringContaining('Snapshot feature gate is off'),
      fix: expect.stringContaining('add Snapshot to spec.configuration.developerConfiguration.featureGates'),
      affects: ['snapshots'],
    });
    expect(rows.get('gate-vmexport')).toMatchObject({ status: 'fail', fixable: true });
    expect(rows.get('gate-hotplugvolumes')).toMatchObject({ status: 'fail', fixable: true });
    expect(rows.get('gate-expanddisks')).toMatchObject({ status: 'warn', fixable: true });
    expect(rows.get('volumesnapshotclass')).toMatchObject({
      status: 'fail',
      fixable: true,
      message: expect.stringContaining('no VolumeSnapshotClass for driver driver.longhorn.io'),
      fix: expect.stringContaining('create VolumeSnapshotClass longhorn-snapshot'),
    });
    expect(rows.get('metrics-server')).toMatchObject({
      status: 'warn',
      fixable: false,
      message: expect.stringContaining('metrics.k8s.io is not served'),
    });
    expect(rows.get('namespace')).toMatchObject({ status: 'fail', fixable: true, fix: `create namespace ${NS}` });
    expect(rows.get('default-storageclass')).toMatchObject({
      status: 'ok',
      message: expect.stringContaining('longhorn'),
    });
    expect(rows.get('volume-expansion')).toMatchObject({ status: 'ok' });
    expect(rows.get('multus')).toMatchObject({ area: 'network' });
    expect(rows.get('rbac')).toMatchObject({ status: 'ok', fixable: false });
    expect(rows.get('clock-skew')).toMatchObject({ status: 'ok' });
    expect(rows.get('version-skew')).toMatchObject({ status: 'ok' });
    // The capabilities the UI reads say which feature is off and which check explains it.
    const caps = (await call(corral, 'GET', '/api/capabilities')).body as {
      canSnapshot: boolean;
      blocked: { feature: string; check: string }[];
    };
    expect(caps.canSnapshot).toBe(false);
    expect(caps.blocked).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ feature: 'snapshots', check: 'gate-snapshot' }),
        expect.objectContaining({ feature: 'snapshots', check: 'volumesnapshotclass' }),
      ]),
    );
  });

  it('a warning that leaves a feature unusable turns it off too; other warnings do not', async () => {
    const caps = (await call(corral, 'GET', '/api/capabilities')).body as {
      blocked: { feature: string; check: string; reason: string }[];
    };
    // No metrics-server here: no charts, and the blocker names the row that explains it.
    expect(caps.blocked).toContainEqual({
      feature: 'metrics',
      check: 'metrics-server',
      reason: expect.stringContaining('metrics.k8s.io is not served') as unknown,
    });
    // The default class (longhorn) can grow: the volume-expansion row is ok and Expand is not blocked.
    expect(caps.blocked.some((b) => b.feature === 'expand')).toBe(false);
    // The rows' wire form carries no internal flag.
    expect(Object.keys((await checks()).get('metrics-server')!)).not.toContain('warnTurnsOff');
  });

  it('unknown check names are 404, ok checks 409, non-admins 403, unknown fields 400', async () => {
    const unknown = await call(corral, 'POST', '/api/doctor/fix', { name: 'no-such-check' });
    expect(unknown).toMatchObject({ status: 404, body: { error: expect.stringContaining('no doctor check named') } });
    const ok = await call(corral, 'POST', '/api/doctor/fix', { name: 'api' });
    expect(ok).toMatchObject({ status: 409, body: { error: 'check api is ok: nothing to fix' } });
    const notFixable = await call(corral, 'POST', '/api/doctor/fix', { name: 'metrics-server' });
    expect(notFixable).toMatchObject({ status: 409, body: { error: expect.stringContaining('cannot be fixed') } });
    process.env.CORRAL_ADMINS = 'alice@github';
    try {
      const mallory = { 'tailscale-user-login': 'mallory@github' };
      const remote = await call(corral, 'POST', '/api/doctor/fix', {}, mallory);
      expect(remote).toMatchObject({ status: 403, body: { error: expect.stringContaining('read-only') } });
      // Reading the checks is open to everybody.
      expect((await call(corral, 'GET', '/api/doctor', undefined, mallory)).status).toBe(200);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
    expect(gates()).toEqual(['LiveMigration', 'CPUManager']); // the refused callers changed nothing
    const extra = await call(corral, 'POST', '/api/doctor/fix', { name: 'api', colour: 'red' });
    expect(extra).toMatchObject({ status: 400, body: { error: expect.stringContaining('colour') } });
  });

  it('fixes one gate, keeping the gates already listed, as a task that says what changed', async () => {
    const r = await call(corral, 'POST', '/api/doctor/fix', { name: 'gate-snapshot' });
    expect(r.status).toBe(200);
    const body = r.body as { fixed: string[]; tasks: string[]; failed: unknown[] };
    expect(body.fixed).toEqual([
      'enabled feature gate Snapshot on KubeVirt kubevirt/kubevirt (featureGates now: LiveMigration, CPUManager, Snapshot)',
    ]);
    expect(body.failed).toEqual([]);
    expect(gates()).toEqual(['LiveMigration', 'CPUManager', 'Snapshot']);
    const task = (await call(corral, 'GET', `/api/tasks/${body.tasks[0]}`)).body as { status: string; log: string };
    expect(task.status).toBe('done');
    expect(task.log).toContain('enabled feature gate Snapshot');
    expect((await checks()).get('gate-snapshot')).toMatchObject({ status: 'ok', fixable: false });
  });

  it('fix all repairs every fixable row, then they read green', async () => {
    const r = await call(corral, 'POST', '/api/doctor/fix', {});
    expect(r.status).toBe(200);
    const body = r.body as { fixed: string[]; failed: unknown[] };
    expect(body.failed).toEqual([]);
    expect(body.fixed).toEqual(
      expect.arrayContaining([
        `created namespace ${NS}`,
        'created VolumeSnapshotClass longhorn-snapshot (driver driver.longhorn.io, deletionPolicy Delete, default)',
        expect.stringContaining('enabled feature gate VMExport'),
        expect.stringContaining('enabled feature gate HotplugVolumes'),
        expect.stringContaining('enabled feature gate ExpandDisks'),
      ]),
    );
    expect(gates()).toEqual(
      expect.arrayContaining(['LiveMigration', 'CPUManager', 'Snapshot', 'VMExport', 'HotplugVolumes', 'ExpandDisks']),
    );
    expect(sim.store.get(VSC, undefined, 'longhorn-snapshot')).toMatchObject({ driver: 'driver.longhorn.io' });
    const rows = await checks();
    for (const name of ['namespace', 'volumesnapshotclass', 'gate-vmexport', 'gate-hotplugvolumes', 'gate-expanddisks'])
      expect(rows.get(name)?.status, name).toBe('ok');
    // Only the warning fix-all cannot repair still turns its feature off (metrics-server is not installed here).
    const caps = (await call(corral, 'GET', '/api/capabilities')).body as { blocked: { feature: string }[] };
    expect(caps).toMatchObject({ canSnapshot: true });
    expect(caps.blocked.filter((b) => b.feature !== 'metrics' && b.feature !== 'networks')).toEqual([]);
    expect(caps.blocked.map((b) => b.feature)).toContain('metrics');
    // Nothing left to fix: fix all is an empty answer, not an error.
    expect((await call(corral, 'POST', '/api/doctor/fix', {})).body).toMatchObject({ fixed: [], failed: [] });
  });

  it('metrics-server is reported ok once it is served', async () => {
    sim.context.settings.metricsServer = true;
    try {
      expect((await checks()).get('metrics-server')).toMatchObject({ status: 'ok' });
      const caps = (await call(corral, 'GET', '/api/capabilities')).body as { blocked: { feature: string }[] };
      expect(caps.blocked.map((b) => b.feature)).not.toContain('metrics');
    } finally {
      sim.context.settings.metricsServer = false;
    }
  });

  it('repairs a corrupt sources ConfigMap and keeps the broken text under a backup key', async () => {
    const broken = '[{"name":"good","kind":"url","uri":"https://example.com/a.img"}, {"name": 7}';
    sim.store.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'corral-sources', namespace: NS },
      data: { 'sources.json': broken },
    });
    const row = (await checks()).get('sources-configmap');
    expect(row).toMatchObject({ status: 'fail', fixable: true, message: expect.stringContaining('not valid JSON') });
    const r = await call(corral, 'POST', '/api/doctor/fix', { name: 'sources-configmap' });
    expect(r.status).toBe(200);
    const data = sim.store.get(CONFIGMAPS, NS, 'corral-sources')?.data as Record<string, string>;
    const backup = Object.keys(data).find((k) => k.startsWith('sources.json.bak-'));
    expect(backup).toMatch(/^sources\.json\.bak-\d{8}T\d{6}Z$/);
    expect(data[backup!]).toBe(broken);
    expect(JSON.parse(data['sources.json']!)).toEqual([]);
    expect((r.body as { fixed: string[] }).fixed).toEqual([
      `copied the broken sources.json of ${NS}/corral-sources to key ${backup}`,
      'rewrote sources.json with 0 valid entries',
    ]);
    expect((await checks()).get('sources-configmap')).toMatchObject({ status: 'ok' });
  });

  it('a fix that fails is reported with what it had changed (nothing) and the task ends in error', async () => {
    // Gate off again, then the KubeVirt API refuses writes: the fix fails, the gate list stays as it was.
    sim.store.mutate(KUBEVIRT, 'kubevirt', 'kubevirt', (kv) => {
      const dev = (kv.spec as { configuration: { developerConfiguration: { featureGates: string[] } } }).configuration
        .developerConfiguration;
      dev.featureGates = dev.featureGates.filter((g) => g !== 'VMExport');
    });
    sim.faults.update({
      pathPrefix: '/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt',
      failFraction: 1,
      failStatus: 500,
    });
    let r;
    try {
      r = await call(corral, 'POST', '/api/doctor/fix', { name: 'gate-vmexport' });
    } finally {
      sim.faults.clear();
    }
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ error: expect.stringMatching(/^fix gate-vmexport failed: .*\(nothing was changed\)$/) });
    expect(gates()).not.toContain('VMExport');
    expect((await call(corral, 'POST', '/api/doctor/fix', { name: 'gate-vmexport' })).status).toBe(200);
  });
});

describe('doctor running as a ServiceAccount that lacks verbs', () => {
  let limited: RunningCorral | undefined;
  afterAll(async () => {
    await limited?.close();
  });

  it('lists exactly the missing verbs, and the cluster refuses them too', async () => {
    const rbac = 'rbac.authorization.k8s.io';
    sim.store.create('/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'corral', namespace: 'tailvm' },
    });
    sim.store.create('/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        name: 'corral-token',
        namespace: 'tailvm',
        annotations: { 'kubernetes.io/service-account.name': 'corral' },
      },
      data: { token: Buffer.from('corral-sa-token').toString('base64') },
    });
    // Everything, except deleting VMs, creating VM snapshots and exec into pods.
    sim.store.create(`${rbac}/clusterroles`, {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'corral-limited' },
      rules: [
        {
          apiGroups: ['kubevirt.io'],
          resources: ['virtualmachines'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'],
        },
        {
          apiGroups: ['snapshot.kubevirt.io'],
          resources: ['virtualmachinesnapshots'],
          verbs: ['get', 'list', 'delete'],
        },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
        { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
        {
          apiGroups: [
            '',
            'kubevirt.io',
            'subresources.kubevirt.io',
            'batch',
            'cdi.kubevirt.io',
            'upload.cdi.kubevirt.io',
            'snapshot.kubevirt.io',
            'clone.kubevirt.io',
            'export.kubevirt.io',
            'storage.k8s.io',
            'snapshot.storage.k8s.io',
            'instancetype.kubevirt.io',
            'k8s.cni.cncf.io',
            'metrics.k8s.io',
            'coordination.k8s.io',
          ],
          resources: [
            'virtualmachineinstances',
            'virtualmachineinstancemigrations',
            'virtualmachines/start',
            'virtualmachines/stop',
            'virtualmachines/restart',
            'virtualmachines/migrate',
            'virtualmachines/addvolume',
            'virtualmachines/removevolume',
            'nodes/proxy',
            'datavolumes/source',
            'csistoragecapacities',
            'virtualmachineinstances/pause',
            'virtualmachineinstances/unpause',
            'virtualmachineinstances/freeze',
            'virtualmachineinstances/unfreeze',
            'virtualmachineinstances/vnc',
            'virtualmachineinstances/console',
            'virtualmachineinstances/guestosinfo',
            'nodes',
            'persistentvolumeclaims',
            'namespaces',
            'configmaps',
            'secrets',
            'services',
            'events',
            'jobs',
            'datavolumes',
            'uploadtokenrequests',
            'virtualmachinerestores',
            'virtualmachineclones',
            'virtualmachineexports',
            'storageclasses',
            'volumesnapshotclasses',
            'virtualmachineclusterinstancetypes',
            'virtualmachineclusterpreferences',
            'network-attachment-definitions',
            'pods',
            'kubevirts',
            'cdis',
            'serviceaccounts',
            'cronjobs',
            'leases',
          ],
          verbs: ['*'],
        },
        {
          apiGroups: [rbac],
          resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
          verbs: ['*'],
        },
        {
          apiGroups: ['security.openshift.io'],
          resources: ['securitycontextconstraints'],
          resourceNames: ['privileged'],
          verbs: ['use'],
        },
      ],
    });
    sim.store.create(`${rbac}/clusterrolebindings`, {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'corral-limited' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'corral-limited' },
      subjects: [{ kind: 'ServiceAccount', name: 'corral', namespace: 'tailvm' }],
    });
    const yaml = sim.kubeconfig.replace('token: "sim-admin-token"', 'token: "corral-sa-token"');
    limited = await startCorral({ kube: { yaml }, port: 0, host: '127.0.0.1', next: false, plugins: false });
    await limited.cluster.cache.waitForSync(20_000);
    const row = (await checks(limited)).get('rbac');
    expect(row).toMatchObject({ status: 'fail', fixable: false, area: 'access' });
    expect(row?.details).toEqual([
      'delete virtualmachines.kubevirt.io',
      'create pods/exec',
      'create virtualmachinesnapshots.snapshot.kubevirt.io',
    ]);
    expect(row?.message).toMatch(/^3 of \d+ permissions are missing in all namespaces: delete virtualmachines/);
    // One SelfSubjectRulesReview answered it (the embedded apiserver serves it, complete).
    expect(row?.message).toContain('checked with one SelfSubjectRulesReview');
    // What the review says is what the cluster does: the same delete is refused with 403 through the API.
    const refused = await fetch(`${sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/x`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer corral-sa-token' },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe(
      'virtualmachines.kubevirt.io "x" is forbidden: User "system:serviceaccount:tailvm:corral" cannot delete resource "virtualmachines" in API group "kubevirt.io" in the namespace "tailvm"',
    );
  });
});
