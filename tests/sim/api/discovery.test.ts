import { Metrics, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimModule } from '../../../src/sim/module.js';
import { ApiError } from '../../../src/sim/store/errors.js';
import { humanDuration } from '../../../src/sim/http/table.js';
import { expectStatus, raw, startHarness, vmBody, type Harness, type WireJson } from './harness.js';

let h: Harness;

/** A stand-in metrics-server and virt-api verb so discovery has module contributions to list. */
const probeModule: SimModule = {
  name: 'probe',
  start() {},
  subresources: [{ resource: 'virtualmachines', verb: 'start', methods: ['PUT'], handle: () => ({ status: 202 }) }],
  admission: [
    {
      kinds: [{ group: 'kubevirt.io', kind: 'VirtualMachine' }],
      admit(_ctx, request) {
        if (request.operation === 'DELETE') {
          if (request.oldObject?.metadata.labels?.protected === 'yes')
            throw new ApiError(403, 'Forbidden', 'admission webhook "probe" denied the request: protected');
          return;
        }
        const obj = request.object!;
        if (obj.metadata.labels?.deny === 'yes') {
          throw new ApiError(
            422,
            'Invalid',
            'admission webhook "virtualmachine-validator.kubevirt.io" denied the request: denied by label',
          );
        }
        obj.metadata.annotations = { ...obj.metadata.annotations, 'probe/admitted': request.operation };
        if ((obj.spec as { running?: boolean }).running !== undefined)
          return { warnings: ['spec.running is deprecated, please use spec.runStrategy instead.'] };
      },
    },
  ],
  metrics: {
    nodeMetrics: () => [
      {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'NodeMetrics',
        metadata: { name: 'node1' } as never,
        usage: { cpu: '250m', memory: '1024Ki' },
      },
    ],
    podMetrics: () => [
      {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'PodMetrics',
        metadata: {
          name: 'virt-launcher-web-abcde',
          namespace: 'default',
          labels: { 'vm.kubevirt.io/name': 'web' },
        } as never,
        containers: [],
      },
      {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'PodMetrics',
        metadata: { name: 'other', namespace: 'default' } as never,
        containers: [],
      },
    ],
  },
};

beforeAll(async () => {
  h = await startHarness({ modules: [probeModule] });
});
afterAll(async () => {
  await h.cluster.close();
});

const resource = (list: WireJson, name: string) => (list.resources as WireJson[]).find((r) => r.name === name);

describe('legacy discovery', () => {
  it('/api and /apis list versions and groups with preferred versions', async () => {
    const api = await raw(h, 'GET', '/api');
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = await raw(h, 'GET', '/apis');
    const kubevirt = (apis.json.groups as WireJson[]).find((g) => g.name === 'kubevirt.io');
    expect(kubevirt).toEqual({
      name: 'kubevirt.io',
      versions: [
        { groupVersion: 'kubevirt.io/v1', version: 'v1' },
        { groupVersion: 'kubevirt.io/v1alpha3', version: 'v1alpha3' },
      ],
      preferredVersion: { groupVersion: 'kubevirt.io/v1', version: 'v1' },
    });
    const names = (apis.json.groups as WireJson[]).map((g) => g.name);
    for (const g of [
      'cdi.kubevirt.io',
      'snapshot.kubevirt.io',
      'clone.kubevirt.io',
      'export.kubevirt.io',
      'instancetype.kubevirt.io',
      'k8s.cni.cncf.io',
      'storage.k8s.io',
      'snapshot.storage.k8s.io',
      'apiextensions.k8s.io',
      'rbac.authorization.k8s.io',
      'batch',
      'subresources.kubevirt.io',
      'metrics.k8s.io',
    ]) {
      expect(names).toContain(g);
    }
    expect((await raw(h, 'GET', '/apis/kubevirt.io')).json).toMatchObject({ kind: 'APIGroup', name: 'kubevirt.io' });
  });

  it('/apis/kubevirt.io/v1 lists VMs with verbs, short names, categories and a status subresource; VMIs without one', async () => {
    const list = (await raw(h, 'GET', '/apis/kubevirt.io/v1')).json;
    expect(list).toMatchObject({ kind: 'APIResourceList', groupVersion: 'kubevirt.io/v1' });
    expect(resource(list, 'virtualmachines')).toMatchObject({
      singularName: 'virtualmachine',
      namespaced: true,
      kind: 'VirtualMachine',
      shortNames: ['vm', 'vms'],
      categories: ['all'],
      verbs: expect.arrayContaining([
        'create',
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]),
    });
    expect(resource(list, 'virtualmachines/status')).toMatchObject({
      kind: 'VirtualMachine',
      verbs: ['get', 'patch', 'update'],
    });
    expect(resource(list, 'virtualmachineinstances')).toBeTruthy();
    expect(resource(list, 'virtualmachineinstances/status')).toBeUndefined();
  });

  it('/api/v1 lists pods with status, log and exec; network-attachment-definitions keep their dashes', async () => {
    const core = (await raw(h, 'GET', '/api/v1')).json;
    expect(resource(core, 'pods/log')).toBeTruthy();
    expect(resource(core, 'pods/exec')).toBeTruthy();
    expect(resource(core, 'namespaces')).toMatchObject({ namespaced: false, shortNames: ['ns'] });
    const nad = (await raw(h, 'GET', '/apis/k8s.cni.cncf.io/v1')).json;
    expect(resource(nad, 'network-attachment-definitions')).toMatchObject({
      kind: 'NetworkAttachmentDefinition',
      shortNames: ['net-attach-def'],
    });
    const cdi = (await raw(h, 'GET', '/apis/cdi.kubevirt.io/v1beta1')).json;
    expect(resource(cdi, 'datavolumes')).toMatchObject({ shortNames: ['dv', 'dvs'] });
    expect(resource(cdi, 'dataimportcrons')).toMatchObject({ kind: 'DataImportCron', namespaced: true });
    const migrations = (await raw(h, 'GET', '/apis/migrations.kubevirt.io/v1alpha1')).json;
    expect(resource(migrations, 'migrationpolicies')).toMatchObject({ kind: 'MigrationPolicy', namespaced: false });
  });

  it('subresources.kubevirt.io lists bare names from the modules plus console and vnc', async () => {
    const list = (await raw(h, 'GET', '/apis/subresources.kubevirt.io/v1')).json;
    expect(list.resources).toEqual([
      { name: 'virtualmachineinstances/console', namespaced: true },
      { name: 'virtualmachineinstances/vnc', namespaced: true },
      { name: 'virtualmachines/start', namespaced: true },
    ]);
  });

  it('serves the CRDs of every custom kind so kubectl can find them', async () => {
    const crd = await raw(
      h,
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/virtualmachines.kubevirt.io',
    );
    expect(crd.json.spec).toMatchObject({
      group: 'kubevirt.io',
      scope: 'Namespaced',
      names: { kind: 'VirtualMachine', shortNames: ['vm', 'vms'] },
    });
  });
});

describe('module routes', () => {
  it('dispatches a subresource verb to its module and refuses other methods with 405', async () => {
    const ok = await raw(h, 'PUT', '/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachines/web/start');
    expect(ok.status).toBe(202);
    expect(ok.text).toBe('');
    expect(
      (await raw(h, 'GET', '/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachines/web/start')).status,
    ).toBe(405);
    expect(
      (await raw(h, 'PUT', '/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachines/web/fly')).status,
    ).toBe(404);
  });

  it('serves metrics.k8s.io from the providers with label selectors, and 404s the group when metrics-server is off', async () => {
    const metrics = new Metrics(h.kc);
    expect((await metrics.getNodeMetrics()).items[0]?.metadata.name).toBe('node1');
    const pods = await raw(
      h,
      'GET',
      '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=vm.kubevirt.io%2Fname%3Dweb',
    );
    expect(pods.json.items.map((p: WireJson) => p.metadata.name)).toEqual(['virt-launcher-web-abcde']);
    expect((await raw(h, 'GET', '/apis/metrics.k8s.io/v1beta1/pods?watch=true')).status).toBe(405);
    await raw(h, 'PATCH', '/_sim/settings', { metricsServer: false });
    try {
      expect((await raw(h, 'GET', '/apis/metrics.k8s.io/v1beta1/nodes')).status).toBe(404);
      const groups = (await raw(h, 'GET', '/apis')).json.groups.map((g: WireJson) => g.name);
      expect(groups).not.toContain('metrics.k8s.io');
    } finally {
      await raw(h, 'PATCH', '/_sim/settings', { metricsServer: true });
    }
  });
});

describe('KubernetesObjectApi', () => {
  it('resolves kinds through discovery and does create/read/patch/list/delete', async () => {
    const created = await h.objects.create(vmBody('koa') as KubernetesObject);
    expect(created.metadata?.uid).toBeTruthy();
    const read = await h.objects.read({
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'koa', namespace: 'default' },
    });
    expect(read.metadata?.name).toBe('koa');
    const patched = await h.objects.patch(
      {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachine',
        metadata: { name: 'koa', namespace: 'default', labels: { via: 'koa' } },
      },
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    expect(patched.metadata?.labels).toMatchObject({ via: 'koa' });
    const smp = await expectStatus(
      h.objects.patch({
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachine',
        metadata: { name: 'koa', namespace: 'default' },
      }),
    );
    expect(smp.code).toBe(415);
    const cm = await h.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'koa-cm', namespace: 'default' },
    } as KubernetesObject);
    expect(cm.metadata?.name).toBe('koa-cm');
    const list = await h.objects.list('kubevirt.io/v1', 'VirtualMachine', 'default');
    expect(list.items.map((i) => i.metadata?.name)).toContain('koa');
  });
});

describe('OpenAPI v3', () => {
  it('lists every group-version and serves PATCH operations kubectl uses to detect fieldValidation', async () => {
    const root = (await raw(h, 'GET', '/openapi/v3')).json;
    expect(Object.keys(root.paths)).toEqual(
      expect.arrayContaining([
        'api/v1',
        'apis/kubevirt.io/v1',
        'apis/kubevirt.io/v1alpha3',
        'apis/cdi.kubevirt.io/v1beta1',
      ]),
    );
    const url = root.paths['apis/kubevirt.io/v1'].serverRelativeURL as string;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/kubevirt\.io\/v1\?hash=[0-9A-F]+$/);
    const doc = (await raw(h, 'GET', `${url}&timeout=32s`)).json;
    const op = doc.paths['/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}'].patch;
    expect(op['x-kubernetes-group-version-kind']).toEqual({
      group: 'kubevirt.io',
      version: 'v1',
      kind: 'VirtualMachine',
    });
    expect(op.parameters.map((p: WireJson) => p.name)).toContain('fieldValidation');
    expect(Object.keys(op.requestBody.content)).not.toContain('application/strategic-merge-patch+json');
    expect((await raw(h, 'GET', '/openapi/v3/apis/nope/v1')).status).toBe(404);
    // The upstream schema sits under the kind's GVK, so `kubectl explain vm.spec.runStrategy` finds it.
    const vmSchema = doc.components.schemas['v1.VirtualMachine'];
    expect(vmSchema['x-kubernetes-group-version-kind']).toEqual([
      { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' },
    ]);
    expect(vmSchema.properties.spec.$ref).toBe('#/components/schemas/v1.VirtualMachineSpec');
    expect(doc.components.schemas['v1.VirtualMachineSpec'].properties.runStrategy.type).toBe('string');
  });
});

describe('Table output', () => {
  const TABLE =
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

  it('renders VM columns (Age, Status, Ready) with a server-rendered age', async () => {
    await h.custom.createNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'default',
      plural: 'virtualmachines',
      body: vmBody('tbl'),
    });
    const res = await raw(
      h,
      'GET',
      '/apis/kubevirt.io/v1/namespaces/default/virtualmachines?limit=500&fieldSelector=metadata.name%3Dtbl',
      undefined,
      { Accept: TABLE },
    );
    expect(res.headers.get('content-type')).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    expect(res.json.columnDefinitions.map((c: WireJson) => c.name)).toEqual(['Name', 'Age', 'Status', 'Ready']);
    expect(res.json.rows[0].cells[0]).toBe('tbl');
    expect(res.json.rows[0].cells[1]).toMatch(/^\d+s$/);
    expect(res.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'tbl' } });
  });

  it('renders namespace and pod columns', async () => {
    const ns = await raw(h, 'GET', '/api/v1/namespaces/default', undefined, { Accept: TABLE });
    expect(ns.json.rows[0].cells.slice(0, 2)).toEqual(['default', 'Active']);
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'tp' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const pods = await raw(h, 'GET', '/api/v1/namespaces/default/pods', undefined, { Accept: TABLE });
    expect(pods.json.columnDefinitions.map((c: WireJson) => c.name).slice(0, 5)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
    ]);
    expect(pods.json.rows[0].cells.slice(0, 4)).toEqual(['tp', '0/1', 'Pending', 0]);
  });

  it('events show Last Seen first and their name only with -o wide', async () => {
    await h.core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'ev1' },
        involvedObject: { kind: 'VirtualMachine', name: 'tbl' },
        reason: 'Started',
        message: 'hello',
        type: 'Normal',
        lastTimestamp: new Date(),
      },
    });
    const res = await raw(h, 'GET', '/api/v1/namespaces/default/events', undefined, { Accept: TABLE });
    const cols = res.json.columnDefinitions as WireJson[];
    expect(cols.map((c) => c.name)).toEqual(['Last Seen', 'Type', 'Reason', 'Object', 'Message', 'Name']);
    expect(cols[5]!.priority).toBe(1);
    expect(res.json.rows[0].cells.slice(1)).toEqual(['Normal', 'Started', 'virtualmachine/tbl', 'hello', 'ev1']);
  });

  it('formats ages like apimachinery HumanDuration', () => {
    const s = 1000;
    expect(humanDuration(5 * s)).toBe('5s');
    expect(humanDuration(150 * s)).toBe('2m30s');
    expect(humanDuration(600 * s)).toBe('10m');
    expect(humanDuration(4 * 3600 * s + 60 * s)).toBe('4h1m');
    expect(humanDuration(30 * 3600 * s)).toBe('30h');
    expect(humanDuration(3 * 86400 * s + 3600 * s)).toBe('3d1h');
    expect(humanDuration(400 * 86400 * s)).toBe('400d');
    expect(humanDuration(-5 * s)).toBe('<invalid>');
  });
});

describe('admission hooks', () => {
  it('run on create/update/delete: deny, mutate and warn', async () => {
    const denied = await raw(h, 'POST', '/apis/kubevirt.io/v1/namespaces/default/virtualmachines', {
      ...vmBody('deny'),
      metadata: { name: 'deny', labels: { deny: 'yes' } },
    });
    expect(denied.status).toBe(422);
    expect(denied.json.message).toContain('denied the request');
    const { runStrategy: _r, ...spec } = vmBody('warned').spec;
    const warned = await raw(h, 'POST', '/apis/kubevirt.io/v1/namespaces/default/virtualmachines', {
      ...vmBody('warned'),
      spec: { ...spec, running: false },
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toContain('spec.running is deprecated');
    expect(warned.json.metadata.annotations['probe/admitted']).toBe('CREATE');
    const patched = await raw(
      h,
      'PATCH',
      '/apis/kubevirt.io/v1/namespaces/default/virtualmachines/warned',
      { metadata: { labels: { protected: 'yes' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patched.json.metadata.annotations['probe/admitted']).toBe('UPDATE');
    expect((await raw(h, 'DELETE', '/apis/kubevirt.io/v1/namespaces/default/virtualmachines/warned')).status).toBe(403);
    expect((await raw(h, 'GET', '/apis/kubevirt.io/v1/namespaces/default/virtualmachines/warned')).status).toBe(200);
  });
});

describe('access reviews', () => {
  it('allows every SelfSubjectAccessReview and names the admin user in SelfSubjectReview', async () => {
    const review = await raw(h, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'delete', group: 'kubevirt.io', resource: 'virtualmachines' } },
    });
    expect(review.status).toBe(201);
    expect(review.json.status.allowed).toBe(true);
    expect((await raw(h, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: {} })).status).toBe(
      422,
    );
    const whoami = await raw(h, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(whoami.json.status.userInfo.username).toBe('corral-sim-admin');
    // kubectl auth can-i's protobuf body: tests/sim/proto/http.test.ts
    const list = (await raw(h, 'GET', '/apis/authorization.k8s.io/v1')).json;
    expect(list.resources).toEqual([
      {
        name: 'selfsubjectaccessreviews',
        singularName: '',
        namespaced: false,
        kind: 'SelfSubjectAccessReview',
        verbs: ['create'],
      },
      {
        name: 'selfsubjectrulesreviews',
        singularName: '',
        namespaced: false,
        kind: 'SelfSubjectRulesReview',
        verbs: ['create'],
      },
    ]);
  });
});
