/**
 * The protobuf decoder against bodies kubectl really sent (captured from kubectl v1.32 against the embedded cluster
 * through a logging proxy, with the same command's `--dry-run=client -o json` as the JSON it would have sent: the
 * decoded object must equal it exactly, `creationTimestamp: null` included), and
 * against hand-encoded bodies for the kinds kubectl has no imperative create for and for wire-level edge cases.
 */
import { describe, expect, it } from 'vitest';
import { decodeObject, readEnvelope } from '../../../src/sim/proto/envelope.js';
import { MESSAGES, parseDescriptors, protobufMessageFor } from '../../../src/sim/proto/schema.js';
import { ProtoError } from '../../../src/sim/proto/wire.js';
import { KINDS } from '../../../src/sim/resources/kinds.js';
import { encodeMessage, encodeObject, envelope, field, varint } from './encode.js';
import bodies from './kubectl-bodies.json';

type Obj = Record<string, unknown> & { apiVersion: string; kind: string };

const decode = (body: Uint8Array, kind: string) => decodeObject(body, MESSAGES.get(kind)!);
const roundTrip = (obj: Obj) => decode(encodeObject(obj), obj.kind);

describe('bodies captured from kubectl', () => {
  for (const [name, capture] of Object.entries(bodies)) {
    it(`${name}: ${capture.command}`, () => {
      const json = capture.json as Obj;
      expect(decode(Buffer.from(capture.protobuf, 'base64'), json.kind)).toEqual(json);
    });
  }

  it('the envelope carries the TypeMeta and the raw object', () => {
    const env = readEnvelope(Buffer.from(bodies.deployment.protobuf, 'base64'));
    expect(env).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', contentEncoding: '', contentType: '' });
    expect(env.raw.length).toBeGreaterThan(0);
  });

  it('keeps the values that need care: bytes as base64, empty map values, pointer zero, string target port', () => {
    const cm = decode(Buffer.from(bodies.configmap.protobuf, 'base64'), 'ConfigMap');
    expect(cm.binaryData).toEqual({ blob: Buffer.from([0x50, 0x4e, 0x47, 0, 1, 2, 0xff]).toString('base64') });
    expect(cm.data).toEqual({ a: 'b', empty: '' });
    const secret = decode(Buffer.from(bodies.secret.protobuf, 'base64'), 'Secret');
    expect(secret.data).toEqual({ pw: Buffer.from('hunter2').toString('base64'), token: '' });
    const deployment = decode(Buffer.from(bodies.deployment.protobuf, 'base64'), 'Deployment');
    expect((deployment.spec as { replicas: number }).replicas).toBe(0);
    const service = decode(Buffer.from(bodies.service.protobuf, 'base64'), 'Service');
    expect((service.spec as { ports: unknown[] }).ports).toEqual([
      { name: '80-http', protocol: 'TCP', port: 80, targetPort: 'http' },
    ]);
  });
});

describe('hand-encoded bodies of the other served kinds', () => {
  it('Pod: pointer zeros kept, non-pointer zeros dropped, int target port, resources as Quantity strings', () => {
    const pod: Obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', labels: { app: 'p' }, generation: 0 },
      spec: {
        hostNetwork: false,
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        securityContext: { runAsUser: 0, runAsNonRoot: false, supplementalGroups: [1000, 2000] },
        containers: [
          {
            name: 'c',
            image: 'nginx',
            resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
            readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: 'http' } },
            env: [
              { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a', optional: true } } },
              { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
            envFrom: [{ secretRef: { name: 'sec' }, prefix: 'S_' }],
            volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: false }],
          },
        ],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'pvc' } },
          { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420, optional: false } },
        ],
      },
      status: {
        phase: 'Running',
        startTime: '2026-01-02T03:04:05Z',
        containerStatuses: [
          {
            name: 'c',
            ready: true,
            restartCount: 0,
            state: { terminated: { exitCode: -1, reason: 'Error', finishedAt: '2026-01-02T03:05:00Z' } },
          },
        ],
      },
    };
    const decoded = roundTrip(pod) as { metadata: unknown; spec: Record<string, unknown>; status: Obj };
    expect(decoded.metadata).toEqual({ name: 'p', namespace: 'ns', labels: { app: 'p' } }); // generation 0 dropped
    expect(decoded.spec.hostNetwork).toBeUndefined(); // plain bool: false is the same as absent
    expect(decoded.spec).toMatchObject({ automountServiceAccountToken: false, terminationGracePeriodSeconds: 0 });
    expect(decoded.spec.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      supplementalGroups: [1000, 2000],
    });
    const [container] = decoded.spec.containers as Record<string, unknown>[];
    expect(container).toEqual({
      ...(pod.spec as { containers: object[] }).containers[0],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    });
    expect(decoded.spec.volumes).toEqual((pod.spec as { volumes: unknown }).volumes);
    expect(decoded.status).toEqual({
      phase: 'Running',
      startTime: '2026-01-02T03:04:05Z',
      containerStatuses: [
        {
          name: 'c',
          ready: true,
          state: { terminated: { exitCode: -1, reason: 'Error', finishedAt: '2026-01-02T03:05:00Z' } },
        },
      ],
    });
  });

  it('PersistentVolumeClaim and PersistentVolume: storageClassName "" is kept, capacity is a Quantity', () => {
    const pvc: Obj = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'ns' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: '',
        volumeMode: 'Block',
        resources: { requests: { storage: '10Gi' } },
        dataSource: { kind: 'PersistentVolumeClaim', name: 'src' },
      },
    };
    expect(roundTrip(pvc)).toEqual(pvc);
    const pv: Obj = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv1' },
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: '/mnt/pv1', type: 'DirectoryOrCreate' },
        persistentVolumeReclaimPolicy: 'Retain',
        claimRef: { namespace: 'ns', name: 'data' },
      },
    };
    expect(roundTrip(pv)).toEqual(pv);
  });

  it('Event: Time to the second, MicroTime to the microsecond', () => {
    const event: Obj = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', namespace: 'ns' },
      involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-1' },
      reason: 'Started',
      message: 'Started container c',
      type: 'Normal',
      count: 3,
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:09Z',
      eventTime: '2026-01-02T03:04:05.123456Z',
      reportingComponent: 'kubelet',
      source: { component: 'kubelet', host: 'node-1' },
    };
    expect(roundTrip(event)).toEqual(event);
  });

  it('Node, Namespace, Service, StorageClass, ClusterRoleBinding, Job, Lease', () => {
    const objects: Obj[] = [
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'controller', namespace: 'kube-system' },
        spec: {
          holderIdentity: 'pod-a',
          leaseDurationSeconds: 15,
          leaseTransitions: 0,
          acquireTime: '2026-01-02T03:04:05.000000Z',
          renewTime: '2026-01-02T03:04:20.250000Z',
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
        spec: { unschedulable: true, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
        status: {
          capacity: { cpu: '8', memory: '32Gi' },
          addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
          conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-02T03:04:05Z' }],
        },
      },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' }, spec: { finalizers: ['kubernetes'] } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's', namespace: 'ns' },
        spec: {
          type: 'ClusterIP',
          selector: { app: 's' },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
          ipFamilyPolicy: 'SingleStack',
          allocateLoadBalancerNodePorts: false,
        },
      },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'fast' },
        provisioner: 'example.com/csi',
        parameters: { type: 'ssd' },
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'WaitForFirstConsumer',
        allowVolumeExpansion: false,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'b' },
        subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      },
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: 'j',
          namespace: 'ns',
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u', controller: false }],
          managedFields: [
            {
              manager: 'kubectl',
              operation: 'Update',
              apiVersion: 'batch/v1',
              time: '2026-01-02T03:04:05Z',
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:spec': { 'f:backoffLimit': {} } },
            },
          ],
        },
        spec: {
          backoffLimit: 0,
          suspend: false,
          template: { metadata: {}, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
    ];
    for (const obj of objects) expect(roundTrip(obj)).toEqual(obj);
  });

  it('DeleteOptions', () => {
    const raw = encodeMessage(MESSAGES.get('DeleteOptions')!, {
      propagationPolicy: 'Orphan',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u-1' },
      dryRun: ['All'],
    });
    expect(decodeObject(envelope('v1', 'DeleteOptions', raw), MESSAGES.get('DeleteOptions')!)).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Orphan',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u-1' },
      dryRun: ['All'],
    });
  });
});

describe('wire details', () => {
  const cm = MESSAGES.get('ConfigMap')!;

  it('skips fields it has no descriptor for, of every wire type', () => {
    const meta = [...field(1, 'c'), ...field(99, 7), ...field(98, 'x'), ...[0xd1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]];
    const raw = [...field(1, meta), ...field(50, [1, 2, 3]), ...[0xad, 0x03, 9, 9, 9, 9]];
    expect(decodeObject(envelope('v1', 'ConfigMap', raw), cm)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
    });
  });

  it('reads packed and unpacked repeated integers, and negative int64 as ten-byte varints', () => {
    const ctx = MESSAGES.get('PodSecurityContext')!;
    const packed = [...varint(1000), ...varint(-5)];
    const fromPacked = encodeMessage(ctx, {}).concat(field(4, packed));
    const unpacked = [...field(4, 1000), ...field(4, -5n)];
    expect(varint(-5)).toHaveLength(10);
    const decodeCtx = (raw: number[]) =>
      decodeObject(envelope('v1', 'Pod', field(2, field(14, raw))), MESSAGES.get('Pod')!);
    expect(decodeCtx(fromPacked)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { securityContext: { supplementalGroups: [1000, -5] } },
    });
    expect(decodeCtx(unpacked)).toEqual(decodeCtx(fromPacked));
  });

  it('a map entry without a value is the empty string', () => {
    const raw = field(2, field(1, 'k'));
    expect(decodeObject(envelope('v1', 'ConfigMap', raw), cm)).toMatchObject({ data: { k: '' } });
  });

  it('rejects malformed bodies with a ProtoError', () => {
    const bad: [string, Uint8Array][] = [
      ['no magic', Buffer.from('{"kind":"ConfigMap"}')],
      ['truncated varint', envelope('v1', 'ConfigMap', [0x10, 0xff])],
      ['length past the end', envelope('v1', 'ConfigMap', [0x0a, 0x20, 0x01])],
      ['a string sent as a varint', envelope('v1', 'ConfigMap', field(1, field(1, 5)))],
      ['field number 0', envelope('v1', 'ConfigMap', [0x02, 0x00])],
      ['content encoding', Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(3, 'gzip')])],
      ['a Time past year 9999', envelope('v1', 'ConfigMap', field(1, field(8, field(1, 253402300800))))],
      ['FieldsV1 that is not JSON', envelope('v1', 'ConfigMap', field(1, field(17, field(7, field(1, '{')))))],
    ];
    for (const [what, body] of bad) expect(() => decodeObject(body, cm), what).toThrow(ProtoError);
    expect(() => decodeObject(envelope('v1', 'ConfigMap', field(1, field(1, 5))), cm)).toThrow(
      'field ObjectMeta.name (1) has wire type 0, expected 2',
    );
  });
});

describe('garbage in', () => {
  it('mutated kubectl bodies decode or fail with a ProtoError, never anything else', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const captures = Object.values(bodies).map((c) => ({
      body: Buffer.from(c.protobuf, 'base64'),
      message: MESSAGES.get((c.json as Obj).kind)!,
    }));
    let decoded = 0;
    for (let i = 0; i < 1500; i++) {
      const { body, message } = captures[random(captures.length)]!;
      const mutated = Buffer.from(body);
      for (let flips = 1 + random(3); flips > 0; flips--) mutated[4 + random(mutated.length - 4)] = random(256);
      try {
        decodeObject(mutated.subarray(0, mutated.length - random(3)), message);
        decoded++;
      } catch (err) {
        expect(err).toBeInstanceOf(ProtoError);
      }
    }
    expect(decoded).toBeGreaterThan(0);
  });
});

describe('descriptors', () => {
  it('cover every built-in kind the embedded cluster serves except CustomResourceDefinition', () => {
    const missing = KINDS.filter((k) => k.builtin && k.kind !== 'CustomResourceDefinition')
      .filter((k) => !protobufMessageFor(k.group, k.kind))
      .map((k) => k.kind);
    expect(missing).toEqual([]);
    expect(protobufMessageFor('kubevirt.io', 'VirtualMachine')).toBeUndefined();
  });

  it('the notation rejects malformed entries and dangling references', () => {
    expect(() => parseDescriptors(['A: 1 name string, 1 other string'])).toThrow('duplicate field number 1 in A');
    expect(() => parseDescriptors(['A: 1 b Missing'])).toThrow('A.b refers to undescribed message Missing');
    expect(() => parseDescriptors(['A: one name string'])).toThrow('bad field descriptor in A');
    expect(() => parseDescriptors(['  1 name string'])).toThrow('continuation line without a message');
    expect(parseDescriptors(['A: 1 x? int32,', '  2 y []B', 'B:']).get('A')!.fields.get(1)).toEqual({
      no: 1,
      name: 'x',
      type: 'int32',
      pointer: true,
      repeated: false,
      map: false,
      inline: false,
    });
    expect(() => parseDescriptors(['A: 1 ...b []B', 'B:'])).toThrow('only a single message field can be inlined');
  });
});
