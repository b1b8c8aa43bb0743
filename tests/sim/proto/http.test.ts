/**
 * Protobuf request bodies on the wire: what kubectl sent, posted to the embedded cluster, is stored as the same
 * object its JSON twin produces; update and DeleteOptions in protobuf; the 415s (custom resources, unknown media
 * types); YAML bodies; and the Deployment scale subresource `kubectl scale` uses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeObject } from '../../../src/sim/proto/envelope.js';
import { MESSAGES } from '../../../src/sim/proto/schema.js';
import { KINDS } from '../../../src/sim/resources/kinds.js';
import { raw, startHarness, type Harness, type WireJson } from '../api/harness.js';
import { encodeMessage, encodeObject, envelope, field } from './encode.js';
import bodies from './kubectl-bodies.json';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

/** POST/PUT raw bytes (fetch in the harness stringifies; protobuf needs a binary body). */
async function send(method: string, path: string, body: Buffer | string, contentType: string) {
  const res = await fetch(h.url + path, {
    method,
    headers: { 'Content-Type': contentType, Accept: `${PROTOBUF}, application/json` },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), json: JSON.parse(text) as WireJson };
}

function collectionPath(kind: string, namespace: string): string {
  const k = KINDS.find((t) => t.kind === kind && t.builtin)!;
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return `${base}${k.namespaced ? `/namespaces/${namespace}` : ''}/${k.plural}`;
}

/** What the server decides for itself (identity, time, version) is not part of the comparison. */
function comparable(obj: WireJson): WireJson {
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ...metadata } = obj.metadata as WireJson;
  return { ...obj, metadata };
}

describe('bodies kubectl sent, posted back', () => {
  // kubectl created namespace fx2 first and everything else in it; the namespace fixture comes first here too.
  const order = ['namespace', ...Object.keys(bodies).filter((k) => k !== 'namespace')] as (keyof typeof bodies)[];
  for (const name of order) {
    it(`${name}: stored like the JSON body (${bodies[name].command})`, async () => {
      const capture = bodies[name];
      const json = capture.json as WireJson;
      const path = collectionPath(json.kind, 'fx2');
      const dry = await send('POST', `${path}?dryRun=All`, JSON.stringify(json), 'application/json');
      expect(dry.status).toBe(201);
      const created = await send('POST', path, Buffer.from(capture.protobuf, 'base64'), PROTOBUF);
      expect(created.status).toBe(201);
      expect(created.contentType).toBe('application/json'); // protobuf is only asked for first; JSON is served
      expect(comparable(created.json)).toEqual(comparable(dry.json));
      const read = await raw(h, 'GET', `${path}/${json.metadata.name}`);
      expect(comparable(read.json)).toEqual(comparable(created.json));
    });
  }
});

describe('update and delete in protobuf', () => {
  it('PUT replaces the object; a stale resourceVersion is a 409', async () => {
    const path = collectionPath('ConfigMap', 'default');
    await raw(h, 'POST', path, { metadata: { name: 'upd' }, data: { a: '1' } });
    const current = (await raw(h, 'GET', `${path}/upd`)).json;
    const next = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'upd', namespace: 'default', resourceVersion: current.metadata.resourceVersion },
      data: { a: '2', b: '' },
    };
    const updated = await send('PUT', `${path}/upd`, encodeObject(next), PROTOBUF);
    expect(updated.status).toBe(200);
    expect(updated.json.data).toEqual({ a: '2', b: '' });
    const stale = await send('PUT', `${path}/upd`, encodeObject(next), PROTOBUF);
    expect(stale.status).toBe(409);
    expect(stale.json.reason).toBe('Conflict');
  });

  it('DeleteOptions in protobuf: a uid precondition that does not match is a 409, a matching one deletes', async () => {
    const path = collectionPath('Secret', 'default');
    const created = await raw(h, 'POST', path, { metadata: { name: 'del' }, stringData: { x: 'y' } });
    const options = (uid: string) =>
      envelope('v1', 'DeleteOptions', encodeMessage(MESSAGES.get('DeleteOptions')!, { preconditions: { uid } }));
    const refused = await send('DELETE', `${path}/del`, options('not-the-uid'), PROTOBUF);
    expect(refused.status).toBe(409);
    const deleted = await send('DELETE', `${path}/del`, options(created.json.metadata.uid as string), PROTOBUF);
    expect(deleted.status).toBe(200);
    expect((await raw(h, 'GET', `${path}/del`)).status).toBe(404);
  });
});

describe('Lease', () => {
  it('is served (coordination.k8s.io/v1) and takes protobuf, as client-go leader election sends it', async () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader', namespace: 'default' },
      spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: '2026-01-02T03:04:20.250000Z' },
    };
    const created = await send('POST', collectionPath('Lease', 'default'), encodeObject(lease), PROTOBUF);
    expect(created.status).toBe(201);
    expect(created.json.spec).toEqual(lease.spec);
    const table = await raw(h, 'GET', `${collectionPath('Lease', 'default')}/leader`, undefined, {
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.json.columnDefinitions.map((c: WireJson) => c.name)).toEqual(['Name', 'Holder', 'Age']);
    expect(table.json.rows[0].cells.slice(0, 2)).toEqual(['leader', 'pod-a']);
  });
});

describe('protobuf responses', () => {
  const get = async (path: string, accept: string) => {
    const res = await fetch(h.url + path, { headers: { Accept: accept } });
    return { contentType: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
  };
  const PROTOBUF_FIRST = `${PROTOBUF}, application/json`;

  it('get and list of a built-in kind are protobuf when asked for first, and decode to the JSON answer', async () => {
    const path = collectionPath('ConfigMap', 'default');
    await raw(h, 'POST', path, { metadata: { name: 'pb-out', labels: { a: 'b' } }, data: { k: 'v', e: '' } });
    const one = await get(`${path}/pb-out`, PROTOBUF_FIRST);
    expect(one.contentType).toBe(PROTOBUF);
    expect(decodeObject(one.body, MESSAGES.get('ConfigMap')!)).toEqual((await raw(h, 'GET', `${path}/pb-out`)).json);
    const list = await get(`${path}?labelSelector=a%3Db`, PROTOBUF_FIRST);
    expect(list.contentType).toBe(PROTOBUF);
    const decoded = decodeObject(list.body, MESSAGES.get('ConfigMapList')!);
    const json = (await raw(h, 'GET', `${path}?labelSelector=a%3Db`)).json;
    expect(decoded).toEqual(json);
    expect((decoded.items as unknown[]).length).toBe(1);
  });

  it('JSON first, Table, custom resources, and objects protobuf cannot carry are answered in JSON', async () => {
    const path = collectionPath('ConfigMap', 'default');
    expect((await get(`${path}/pb-out`, `application/json, ${PROTOBUF}`)).contentType).toBe('application/json');
    const table = await get(
      `${path}/pb-out`,
      `${PROTOBUF};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io`,
    );
    expect(JSON.parse(table.body.toString()).kind).toBe('Table');
    expect((await get('/apis/kubevirt.io/v1/virtualmachines', PROTOBUF_FIRST)).contentType).toBe('application/json');
    // Built-in kinds are not schema-validated, so a number can sit where a string belongs.
    await raw(h, 'POST', path, { metadata: { name: 'odd' }, data: { n: 5 } });
    const odd = await get(`${path}/odd`, PROTOBUF_FIRST);
    expect(odd.contentType).toBe('application/json');
    expect(JSON.parse(odd.body.toString()).data).toEqual({ n: 5 });
  });
});

describe('kubectl auth can-i: SelfSubjectAccessReview in protobuf', () => {
  const review = (verb: string, resource: string) =>
    encodeMessage(MESSAGES.get('SelfSubjectAccessReview')!, {
      spec: { resourceAttributes: { verb, group: '', resource, namespace: 'default' } },
    });
  const ask = async (verb: string, resource: string, token?: string) => {
    const res = await fetch(`${h.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { 'Content-Type': PROTOBUF, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: new Uint8Array(envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', review(verb, resource))),
    });
    return { status: res.status, json: (await res.json()) as WireJson };
  };

  it('is decoded: the admin is allowed and the spec is echoed', async () => {
    const res = await ask('delete', 'pods');
    expect(res.status).toBe(201);
    expect(res.json.spec).toEqual({
      resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'default' }, // group "" is omitted, as in JSON
    });
    expect(res.json.status.allowed).toBe(true);
  });

  it("a ServiceAccount's review is answered from RBAC like its JSON twin", async () => {
    const store = h.cluster.store;
    store.create('/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reader', namespace: 'default' },
    });
    store.create('/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'reader-token',
        namespace: 'default',
        annotations: { 'kubernetes.io/service-account.name': 'reader' },
      },
      type: 'kubernetes.io/service-account-token',
      data: { token: Buffer.from('reader-token').toString('base64') },
    });
    store.create('rbac.authorization.k8s.io/roles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'read-pods', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    store.create('rbac.authorization.k8s.io/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'read-pods', namespace: 'default' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'default' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-pods' },
    });
    expect((await ask('list', 'pods', 'reader-token')).json.status).toMatchObject({ allowed: true });
    expect((await ask('delete', 'pods', 'reader-token')).json.status.allowed).toBe(false);
  });
});

describe('media types', () => {
  it('a malformed protobuf body is a 400 naming the problem', async () => {
    const res = await send(
      'POST',
      collectionPath('ConfigMap', 'default'),
      envelope('v1', 'ConfigMap', [0x0a, 0x20]),
      PROTOBUF,
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('error decoding protobuf request body: length 32 runs past the end of the data');
  });

  it('a protobuf body whose kind does not fit the URL is the same 400 as in JSON', async () => {
    const res = await send(
      'POST',
      collectionPath('ConfigMap', 'default'),
      encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }),
      PROTOBUF,
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('the kind in the data (Secret) does not match the expected kind (ConfigMap)');
  });

  it('any other media type on a built-in kind is a 415 naming JSON, YAML and protobuf', async () => {
    const res = await send('POST', collectionPath('ConfigMap', 'default'), '{"metadata":{"name":"t"}}', 'text/plain');
    expect(res.status).toBe(415);
    expect(res.json).toMatchObject({
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    });
  });

  it('built-in kinds we hold no protobuf schema of (CustomResourceDefinition) take JSON and YAML only', async () => {
    const res = await send(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      envelope('apiextensions.k8s.io/v1', 'CustomResourceDefinition', field(1, field(1, 'x'))),
      PROTOBUF,
    );
    expect(res.status).toBe(415);
    expect(res.json.message).toContain('accepted media types include: application/json, application/yaml');
    expect(res.json.message).not.toContain('protobuf');
  });

  it('a YAML body creates, and a missing Content-Type is read as JSON', async () => {
    const path = collectionPath('ConfigMap', 'default');
    const yaml = await send(
      'POST',
      path,
      'metadata:\n  name: from-yaml\ndata:\n  k: v\n',
      'application/yaml; charset=utf-8',
    );
    expect(yaml.status).toBe(201);
    expect(yaml.json.data).toEqual({ k: 'v' });
    const res = await fetch(`${h.url}${path}`, { method: 'POST', body: new Blob(['{"metadata":{"name":"no-type"}}']) });
    expect(res.status).toBe(201);
  });
});

describe('deployments/scale', () => {
  const deployments = () => collectionPath('Deployment', 'default');
  beforeAll(async () => {
    const res = await raw(h, 'POST', deployments(), {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }],
        },
        template: {
          metadata: { labels: { app: 'web', tier: 'a' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    expect(res.status).toBe(201);
  });

  it('discovery lists it as autoscaling/v1 Scale', async () => {
    const res = await raw(h, 'GET', '/apis/apps/v1');
    expect(res.json.resources).toContainEqual(
      expect.objectContaining({ name: 'deployments/scale', group: 'autoscaling', version: 'v1', kind: 'Scale' }),
    );
  });

  it('GET reads replicas and the selector; a merge patch writes spec.replicas back', async () => {
    const scale = await raw(h, 'GET', `${deployments()}/web/scale`);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 2 },
      status: { selector: 'app=web,tier in (a,b)' },
    });
    const patched = await raw(
      h,
      'PATCH',
      `${deployments()}/web/scale`,
      { spec: { replicas: 5 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(patched.status).toBe(200);
    expect(patched.json.spec).toEqual({ replicas: 5 });
    const deployment = (await raw(h, 'GET', `${deployments()}/web`)).json;
    expect(deployment.spec.replicas).toBe(5);
    expect(deployment.metadata.generation).toBe(2);
  });

  it('PUT with a stale resourceVersion is a 409; a negative count is a 422; other kinds have no scale', async () => {
    const scale = (await raw(h, 'GET', `${deployments()}/web/scale`)).json;
    const ok = await raw(h, 'PUT', `${deployments()}/web/scale`, { ...scale, spec: { replicas: 0 } });
    expect(ok.status).toBe(200);
    expect(ok.json.spec).toEqual({ replicas: 0 });
    const stale = await raw(h, 'PUT', `${deployments()}/web/scale`, { ...scale, spec: { replicas: 1 } });
    expect(stale.status).toBe(409);
    const negative = await raw(
      h,
      'PATCH',
      `${deployments()}/web/scale`,
      { spec: { replicas: -1 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(negative.status).toBe(422);
    expect(negative.json.message).toContain('spec.replicas');
    expect((await raw(h, 'GET', `${deployments()}/missing/scale`)).status).toBe(404);
    await raw(h, 'POST', collectionPath('ConfigMap', 'default'), { metadata: { name: 'noscale' } });
    expect((await raw(h, 'GET', `${collectionPath('ConfigMap', 'default')}/noscale/scale`)).status).toBe(404);
  });
});
