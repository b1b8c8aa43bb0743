import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, raw, startHarness, vmBody, type Harness } from './harness.js';

let h: Harness;
const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  h = await startHarness();
  await h.core.createNamespace({ body: { metadata: { name: 'verbs' } } });
});
afterAll(async () => {
  await h.cluster.close();
});

async function createVm(name: string, extra: Record<string, unknown> = {}) {
  return h.custom.createNamespacedCustomObject({ ...VM, namespace: 'verbs', body: vmBody(name, 'verbs', extra) });
}

describe('patch types', () => {
  it('merge patch merges objects, deletes with null and bumps generation only for spec changes', async () => {
    await createVm('m1');
    const labelled = await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'verbs', name: 'm1', body: { metadata: { labels: { tier: 'gold', app: null } } } },
      merge,
    );
    expect(labelled.metadata.labels).toEqual({ tier: 'gold' });
    expect(labelled.metadata.generation).toBe(1);
    const specChanged = await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'verbs', name: 'm1', body: { spec: { runStrategy: 'Always' } } },
      merge,
    );
    expect(specChanged.spec.runStrategy).toBe('Always');
    expect(specChanged.spec.template.spec.domain.cpu.cores).toBe(1);
    expect(specChanged.metadata.generation).toBe(2);
  });

  it('client-node default JSON patch applies add/replace/test, and a failed test is 422', async () => {
    await createVm('j1');
    const patched = await h.custom.patchNamespacedCustomObject({
      ...VM,
      namespace: 'verbs',
      name: 'j1',
      body: [
        { op: 'test', path: '/spec/runStrategy', value: 'Halted' },
        { op: 'replace', path: '/spec/runStrategy', value: 'Always' },
        { op: 'add', path: '/metadata/annotations', value: { 'corral.dev/note': 'x' } },
        { op: 'add', path: '/metadata/annotations/a~1b', value: 'slash' },
      ],
    });
    expect(patched.spec.runStrategy).toBe('Always');
    expect(patched.metadata.annotations).toEqual({ 'corral.dev/note': 'x', 'a/b': 'slash' });
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject({
        ...VM,
        namespace: 'verbs',
        name: 'j1',
        body: [
          { op: 'test', path: '/spec/runStrategy', value: 'Halted' },
          { op: 'replace', path: '/spec/runStrategy', value: 'Manual' },
        ],
      }),
    );
    expect(failed).toMatchObject({ code: 422, reason: 'Invalid' });
    const after = await h.custom.getNamespacedCustomObject({ ...VM, namespace: 'verbs', name: 'j1' });
    expect(after.spec.runStrategy).toBe('Always');
  });

  it('a null JSON-patch test value matches a missing path; remove of a missing path is 422', async () => {
    await createVm('j2');
    await h.custom.patchNamespacedCustomObject({
      ...VM,
      namespace: 'verbs',
      name: 'j2',
      body: [{ op: 'test', path: '/spec/running', value: null }],
    });
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject({
        ...VM,
        namespace: 'verbs',
        name: 'j2',
        body: [{ op: 'remove', path: '/spec/nope' }],
      }),
    );
    expect(failed.code).toBe(422);
  });

  it('an object body sent as JSON patch is 400, as a real server answers', async () => {
    await createVm('j3');
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject({
        ...VM,
        namespace: 'verbs',
        name: 'j3',
        body: { spec: { runStrategy: 'Always' } },
      }),
    );
    expect(failed).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('strategic merge patch on a custom resource is 415', async () => {
    await createVm('s1');
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject(
        { ...VM, namespace: 'verbs', name: 's1', body: { spec: {} } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(failed).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(failed.message).toContain('application/merge-patch+json');
  });

  it('an unknown patch content type is 415', async () => {
    await createVm('s2');
    const res = await raw(
      h,
      'PATCH',
      '/apis/kubevirt.io/v1/namespaces/verbs/virtualmachines/s2',
      { spec: {} },
      { 'Content-Type': 'text/plain' },
    );
    expect(res.status).toBe(415);
    expect(res.json.reason).toBe('UnsupportedMediaType');
  });

  it('strategic merge on a pod merges containers by name, env by name, and honours $patch: delete', async () => {
    await h.core.createNamespacedPod({
      namespace: 'verbs',
      body: {
        metadata: { name: 'p1' },
        spec: {
          containers: [
            {
              name: 'a',
              image: 'busybox',
              env: [
                { name: 'X', value: '1' },
                { name: 'Y', value: '2' },
              ],
            },
            { name: 'b', image: 'nginx' },
          ],
        },
      },
    });
    const pod = await h.core.patchNamespacedPod(
      {
        namespace: 'verbs',
        name: 'p1',
        body: {
          spec: {
            containers: [
              {
                name: 'a',
                env: [
                  { name: 'Y', value: '3' },
                  { name: 'X', $patch: 'delete' },
                ],
              },
              { name: 'b', $patch: 'delete' },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(pod.spec?.containers).toHaveLength(1);
    expect(pod.spec?.containers[0]).toMatchObject({ name: 'a', image: 'busybox', env: [{ name: 'Y', value: '3' }] });
  });

  it('the same list sent as merge patch replaces the whole array (RFC 7386)', async () => {
    await h.core.createNamespacedPod({
      namespace: 'verbs',
      body: {
        metadata: { name: 'p2' },
        spec: {
          containers: [
            { name: 'a', image: 'x' },
            { name: 'b', image: 'y' },
          ],
        },
      },
    });
    const pod = await h.core.patchNamespacedPod(
      { namespace: 'verbs', name: 'p2', body: { spec: { containers: [{ name: 'b', image: 'z' }] } } },
      merge,
    );
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['b']);
  });

  it('server-side apply creates (201) and then merges named lists', async () => {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa1', namespace: 'verbs' },
      data: { a: '1' },
    };
    const created = await raw(h, 'PATCH', '/api/v1/namespaces/verbs/configmaps/ssa1?fieldManager=test', body, {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(created.status).toBe(201);
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa1\ndata:\n  b: "2"\n';
    const updated = await raw(h, 'PATCH', '/api/v1/namespaces/verbs/configmaps/ssa1?fieldManager=test', yaml, {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(updated.status).toBe(200);
    expect(updated.json.data).toEqual({ a: '1', b: '2' });
    const noManager = await raw(h, 'PATCH', '/api/v1/namespaces/verbs/configmaps/ssa1', body, {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(noManager.status).toBe(400);
  });

  it('a patch that carries a stale resourceVersion is a 409 precondition failure', async () => {
    const vm = await createVm('rv1');
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'verbs', name: 'rv1', body: { metadata: { labels: { x: 'y' } } } },
      merge,
    );
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject(
        {
          ...VM,
          namespace: 'verbs',
          name: 'rv1',
          body: { metadata: { resourceVersion: vm.metadata.resourceVersion, labels: { x: 'z' } } },
        },
        merge,
      ),
    );
    expect(failed).toMatchObject({ code: 409, reason: 'Conflict' });
  });
});

describe('update, status and conflicts', () => {
  it('PUT with a stale resourceVersion is 409 Conflict; PUT of a CR without one is 422', async () => {
    const vm = await createVm('u1');
    const fresh = await h.custom.replaceNamespacedCustomObject({
      ...VM,
      namespace: 'verbs',
      name: 'u1',
      body: { ...vm, spec: { ...vm.spec, runStrategy: 'Always' } },
    });
    expect(fresh.metadata.resourceVersion).not.toBe(vm.metadata.resourceVersion);
    const stale = await expectStatus(
      h.custom.replaceNamespacedCustomObject({ ...VM, namespace: 'verbs', name: 'u1', body: vm }),
    );
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(stale.message).toContain('the object has been modified');
    const { resourceVersion: _rv, ...metaWithoutRv } = fresh.metadata;
    const noRv = await expectStatus(
      h.custom.replaceNamespacedCustomObject({
        ...VM,
        namespace: 'verbs',
        name: 'u1',
        body: { ...fresh, metadata: metaWithoutRv },
      }),
    );
    expect(noRv).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it('a ConfigMap may be PUT without a resourceVersion; a body name differing from the URL is 400', async () => {
    await h.core.createNamespacedConfigMap({
      namespace: 'verbs',
      body: { metadata: { name: 'u2' }, data: { a: '1' } },
    });
    const replaced = await h.core.replaceNamespacedConfigMap({
      namespace: 'verbs',
      name: 'u2',
      body: { metadata: { name: 'u2' }, data: { a: '2' } },
    });
    expect(replaced.data).toEqual({ a: '2' });
    const res = await raw(h, 'PUT', '/api/v1/namespaces/verbs/configmaps/u2', {
      metadata: { name: 'other' },
      data: {},
    });
    expect(res.status).toBe(400);
  });

  it('the main resource ignores status; /status takes only status; generation follows spec', async () => {
    const vm = await createVm('st1', {});
    const withStatus = await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'verbs', name: 'st1', body: { status: { printableStatus: 'Running' } } },
      merge,
    );
    expect(withStatus.status).toBeUndefined();
    const viaStatus = await h.custom.patchNamespacedCustomObjectStatus(
      {
        ...VM,
        namespace: 'verbs',
        name: 'st1',
        body: { status: { printableStatus: 'Stopped' }, spec: { runStrategy: 'Always' } },
      },
      merge,
    );
    expect(viaStatus.status.printableStatus).toBe('Stopped');
    expect(viaStatus.spec.runStrategy).toBe('Halted');
    expect(viaStatus.metadata.generation).toBe(vm.metadata.generation);
  });

  it('status given on create is dropped for kinds with a status subresource', async () => {
    const vm = await createVm('st2');
    expect(vm.status).toBeUndefined();
  });

  it('creating an existing name is 409 AlreadyExists with the resource in details', async () => {
    await createVm('dup');
    const failed = await expectStatus(createVm('dup'));
    expect(failed).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      details: { name: 'dup', group: 'kubevirt.io', kind: 'virtualmachines' },
    });
  });

  it('dryRun=All validates and answers but stores nothing', async () => {
    const res = await raw(
      h,
      'POST',
      '/apis/kubevirt.io/v1/namespaces/verbs/virtualmachines?dryRun=All',
      vmBody('dry', 'verbs'),
    );
    expect(res.status).toBe(201);
    expect(res.json.metadata.uid).toBeTruthy();
    expect((await raw(h, 'GET', '/apis/kubevirt.io/v1/namespaces/verbs/virtualmachines/dry')).status).toBe(404);
  });
});

describe('bad input', () => {
  it('malformed JSON is 400 BadRequest, never a crash', async () => {
    const res = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', '{"metadata": ');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });

  it('an invalid name is 422 Invalid on metadata.name', async () => {
    const res = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', { metadata: { name: 'Bad_Name' } });
    expect(res.status).toBe(422);
    expect(res.json.details.causes[0].field).toBe('metadata.name');
  });

  it('an unknown resource is 404 with the generic message', async () => {
    const res = await raw(h, 'GET', '/apis/kubevirt.io/v1/namespaces/verbs/gizmos');
    expect(res.status).toBe(404);
    expect(res.json.message).toBe('the server could not find the requested resource');
    expect((await raw(h, 'GET', '/apis/nope.io/v1')).status).toBe(404);
  });

  it('creating in a missing namespace is 404; in a terminating one 403', async () => {
    const missing = await raw(h, 'POST', '/api/v1/namespaces/ghost/configmaps', { metadata: { name: 'c' } });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('namespaces "ghost" not found');
    await h.core.createNamespace({ body: { metadata: { name: 'dying' } } });
    await h.core.createNamespacedConfigMap({
      namespace: 'dying',
      body: { metadata: { name: 'held', finalizers: ['test/hold'] } },
    });
    await h.core.deleteNamespace({ name: 'dying' });
    const ns = await h.core.readNamespace({ name: 'dying' });
    expect(ns.status?.phase).toBe('Terminating');
    const refused = await raw(h, 'POST', '/api/v1/namespaces/dying/configmaps', { metadata: { name: 'late' } });
    expect(refused.status).toBe(403);
    expect(refused.json.reason).toBe('Forbidden');
  });

  it('a body namespace that differs from the URL is 400', async () => {
    const res = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'c', namespace: 'default' },
    });
    expect(res.status).toBe(400);
  });

  it('a protobuf body for a custom resource is 415 naming JSON and YAML (protobuf bodies: tests/sim/proto)', async () => {
    const res = await raw(h, 'POST', '/apis/kubevirt.io/v1/namespaces/verbs/virtualmachines', 'k8s\u0000\n', {
      'Content-Type': 'application/vnd.kubernetes.protobuf',
    });
    expect(res.status).toBe(415);
    expect(res.json.reason).toBe('UnsupportedMediaType');
    expect(res.json.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
  });

  it('Accept: protobuf first is answered with JSON for custom resources (built-in kinds: tests/sim/proto)', async () => {
    const res = await raw(h, 'GET', '/apis/kubevirt.io/v1/virtualmachines', undefined, {
      Accept: 'application/vnd.kubernetes.protobuf,application/json',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json.kind).toBe('VirtualMachineList');
  });
});

describe('delete', () => {
  it('a ConfigMap delete answers a Success Status; a CR delete answers the object', async () => {
    await h.core.createNamespacedConfigMap({ namespace: 'verbs', body: { metadata: { name: 'd1' } } });
    const cm = await raw(h, 'DELETE', '/api/v1/namespaces/verbs/configmaps/d1');
    expect(cm.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'd1', kind: 'configmaps' } });
    await createVm('d2');
    const vm = await raw(h, 'DELETE', '/apis/kubevirt.io/v1/namespaces/verbs/virtualmachines/d2', {
      propagationPolicy: 'Background',
    });
    expect(vm.json.kind).toBe('VirtualMachine');
    expect(vm.json.metadata.deletionTimestamp).toBeTruthy(); // held by the VM controller's finalizer
  });

  it('preconditions that do not match are 409', async () => {
    await h.core.createNamespacedConfigMap({ namespace: 'verbs', body: { metadata: { name: 'd3' } } });
    const res = await raw(h, 'DELETE', '/api/v1/namespaces/verbs/configmaps/d3', {
      preconditions: { uid: 'not-the-uid' },
    });
    expect(res.status).toBe(409);
  });

  it('deletecollection deletes only the selected objects and returns them', async () => {
    for (const [name, tier] of [
      ['dc1', 'a'],
      ['dc2', 'a'],
      ['dc3', 'b'],
    ] as const) {
      await h.core.createNamespacedConfigMap({ namespace: 'verbs', body: { metadata: { name, labels: { tier } } } });
    }
    const res = await raw(h, 'DELETE', '/api/v1/namespaces/verbs/configmaps?labelSelector=tier%3Da');
    expect(res.json.kind).toBe('ConfigMapList');
    expect(res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort()).toEqual(['dc1', 'dc2']);
    const left = await h.core.listNamespacedConfigMap({ namespace: 'verbs', labelSelector: 'tier' });
    expect(left.items.map((c) => c.metadata?.name)).toEqual(['dc3']);
  });
});

describe('lists', () => {
  it('built-in list items omit TypeMeta, custom resource items keep it; lists carry the current RV', async () => {
    await h.core.createNamespacedConfigMap({ namespace: 'verbs', body: { metadata: { name: 'l1' } } });
    await createVm('l2');
    const cms = await raw(h, 'GET', '/api/v1/namespaces/verbs/configmaps');
    expect(cms.json.items[0].kind).toBeUndefined();
    const vms = await raw(h, 'GET', '/apis/kubevirt.io/v1/virtualmachines');
    expect(vms.json).toMatchObject({ kind: 'VirtualMachineList', apiVersion: 'kubevirt.io/v1' });
    expect(vms.json.items.every((i: { kind: string }) => i.kind === 'VirtualMachine')).toBe(true);
    expect(Number(vms.json.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('repeated lists reflect every change and always carry the current resourceVersion (list body cache)', async () => {
    const path = '/api/v1/namespaces/verbs/configmaps?labelSelector=cache%3Dyes';
    await h.core.createNamespacedConfigMap({
      namespace: 'verbs',
      body: { metadata: { name: 'lc1', labels: { cache: 'yes' } } },
    });
    const first = await raw(h, 'GET', path);
    expect(first.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['lc1']);
    await h.core.createNamespacedSecret({ namespace: 'verbs', body: { metadata: { name: 'other-kind' } } });
    const unchanged = await raw(h, 'GET', path);
    expect(unchanged.json.items).toEqual(first.json.items);
    expect(Number(unchanged.json.metadata.resourceVersion)).toBeGreaterThan(
      Number(first.json.metadata.resourceVersion),
    );
    await h.core.patchNamespacedConfigMap({ namespace: 'verbs', name: 'lc1', body: { data: { v: '2' } } }, merge);
    await h.core.createNamespacedConfigMap({
      namespace: 'verbs',
      body: { metadata: { name: 'lc2', labels: { cache: 'yes' } } },
    });
    const changed = await raw(h, 'GET', path);
    expect(
      changed.json.items.map((i: { metadata: { name: string }; data?: unknown }) => [i.metadata.name, i.data ?? null]),
    ).toEqual([
      ['lc1', { v: '2' }],
      ['lc2', null],
    ]);
  });

  it('the v1alpha3 alias serves the same objects', async () => {
    await createVm('alias1');
    const res = await raw(h, 'GET', '/apis/kubevirt.io/v1alpha3/namespaces/verbs/virtualmachines/alias1');
    expect(res.status).toBe(200);
    expect(res.json.metadata.name).toBe('alias1');
  });
});

describe('pod log', () => {
  it('serves the simulated container log with tailLines, and container rules like the kubelet', async () => {
    await h.core.createNamespacedPod({
      namespace: 'verbs',
      body: {
        metadata: { name: 'logger', annotations: { 'sim.corral.dev/log': 'one\ntwo\nthree\n' } },
        spec: { containers: [{ name: 'main', image: 'x' }] },
      },
    });
    expect(await h.core.readNamespacedPodLog({ namespace: 'verbs', name: 'logger' })).toBe('one\ntwo\nthree\n');
    expect(await h.core.readNamespacedPodLog({ namespace: 'verbs', name: 'logger', tailLines: 2 })).toBe(
      'two\nthree\n',
    );
    expect((await raw(h, 'GET', '/api/v1/namespaces/verbs/pods/logger/log?container=nope')).status).toBe(400);
    await h.core.createNamespacedPod({
      namespace: 'verbs',
      body: {
        metadata: { name: 'two-c' },
        spec: {
          containers: [
            { name: 'a', image: 'x' },
            { name: 'b', image: 'y' },
          ],
        },
      },
    });
    const ambiguous = await raw(h, 'GET', '/api/v1/namespaces/verbs/pods/two-c/log');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.json.message).toContain('choose one of: [a b]');
    expect((await raw(h, 'GET', '/api/v1/namespaces/verbs/pods/missing/log')).status).toBe(404);
  });
});

describe('metadata checks', () => {
  it('wrong metadata types are 400 decode errors; bad label values and owner references are 422', async () => {
    const labelsNotMap = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'm1', labels: 'x' },
    });
    expect(labelsNotMap.status).toBe(400);
    const numberValue = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'm1', labels: { a: 1 } },
    });
    expect(numberValue.status).toBe(400);
    const badValue = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'm1', labels: { a: 'not ok!' } },
    });
    expect(badValue.status).toBe(422);
    expect(badValue.json.details.causes[0].field).toBe('metadata.labels');
    const badFinalizers = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'm1', finalizers: 'x' },
    });
    expect(badFinalizers.status).toBe(400);
    const badOwner = await raw(h, 'POST', '/api/v1/namespaces/verbs/configmaps', {
      metadata: { name: 'm1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }] },
    });
    expect(badOwner.status).toBe(422);
    await h.core.createNamespacedConfigMap({ namespace: 'verbs', body: { metadata: { name: 'm2' } } });
    const patched = await raw(
      h,
      'PATCH',
      '/api/v1/namespaces/verbs/configmaps/m2',
      { metadata: { labels: { a: 7 } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(400);
    expect((await raw(h, 'GET', '/api/v1/namespaces/verbs/configmaps?labelSelector=a')).status).toBe(200);
  });

  it('odd shapes in built-in kinds do not break Table output or the GC', async () => {
    await raw(h, 'POST', '/api/v1/namespaces/verbs/pods', {
      metadata: { name: 'odd' },
      spec: { containers: 'x', volumes: 5 },
    });
    const table = await raw(h, 'GET', '/api/v1/namespaces/verbs/pods?fieldSelector=metadata.name%3Dodd', undefined, {
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.status).toBe(200);
    expect(table.json.rows[0].cells.slice(0, 3)).toEqual(['odd', '0/0', 'Pending']);
  });

  it('a malformed request target or path encoding is 400, not a crash', async () => {
    const res = await raw(h, 'GET', '/api/v1/namespaces/%E0%A4%A/configmaps');
    expect(res.status).toBe(400);
    expect((await raw(h, 'GET', '/version')).status).toBe(200);
  });
});
