import { describe, expect, it } from 'vitest';
import { FleetState } from './fleet-state';
import type { CtRow, NodeRow, TaskRow, VmRow } from './model';

const vm = (name: string, over: Partial<VmRow> = {}): VmRow => ({
  context: 'home',
  name,
  namespace: 'tailvm',
  status: 'Stopped',
  ready: false,
  running: false,
  cpu: 2,
  mem: '4Gi',
  disk: '20Gi',
  ip: '',
  node: '',
  tags: [],
  template: false,
  uid: `uid-${name}`,
  createdAt: '2026-01-01T00:00:00Z',
  runStrategy: 'Halted',
  instancetype: '',
  preference: '',
  os: '',
  vmid: 100,
  ...over,
});
const node = (name: string): NodeRow => ({
  context: 'home',
  name,
  ready: true,
  roles: 'worker',
  kubelet: 'v1.33.0',
  arch: 'amd64',
  schedulable: true,
  cpu: 16,
  memory: '64Gi',
  ip: '',
  cpuVendor: 'Intel',
  vms: 0,
});
const ct = (name: string): CtRow => ({
  context: 'home',
  name,
  namespace: 'tailvm',
  node: 'n1',
  phase: 'Running',
  ready: true,
  image: 'docker.io/library/debian:bookworm',
  cpu: 1,
  mem: '512Mi',
  privileged: false,
  disk: '8Gi',
  storageClass: '',
  ip: '10.0.0.9',
  createdAt: '2026-01-01T00:00:00Z',
  reason: '',
  diskUsage: null,
});
const task = (id: string, startedAt: string): TaskRow => ({
  id,
  action: 'start',
  target: 'tailvm/a',
  caller: 'alice',
  status: 'running',
  progress: 0,
  log: '',
  error: '',
  startedAt,
  endedAt: null,
});

describe('FleetState', () => {
  it('replaces everything on a snapshot (the resync after a reconnect)', () => {
    const s = new FleetState();
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [vm('a'), vm('b')],
      nodes: [node('n1')],
      tasks: [],
      demo: true,
      cluster: 'demo',
      ready: true,
    });
    expect(s.synced).toBe(true);
    expect(s.demo).toBe(true);
    s.apply({ type: 'vm', op: 'upsert', vm: vm('c') });
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [vm('z')],
      nodes: [],
      tasks: [],
      demo: true,
      cluster: 'demo',
      ready: true,
    });
    expect(s.vms.list().map((v) => v.name)).toEqual(['z']);
    expect(s.nodes.size).toBe(0);
  });

  it('applies VM and node upserts and deletes by key', () => {
    const s = new FleetState();
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [vm('a')],
      nodes: [node('n1')],
      tasks: [],
      demo: false,
      cluster: 'c',
      ready: true,
    });
    s.apply({ type: 'vm', op: 'upsert', vm: vm('a', { status: 'Running' }) });
    expect(s.vms.get('tailvm/a')?.status).toBe('Running');
    s.apply({ type: 'vm', op: 'delete', namespace: 'tailvm', name: 'a' });
    expect(s.vms.size).toBe(0);
    s.apply({ type: 'node', op: 'delete', name: 'n1' });
    expect(s.nodes.size).toBe(0);
  });

  it('applies CT upserts and deletes by namespace/name, beside VMs of the same name', () => {
    const s = new FleetState();
    const box = ct('box');
    s.apply({
      type: 'snapshot',
      cts: [box],
      vms: [vm('box')],
      nodes: [],
      tasks: [],
      demo: false,
      cluster: 'c',
      ready: true,
    });
    expect(s.cts.get('tailvm/box')?.phase).toBe('Running');
    s.apply({ type: 'ct', op: 'upsert', ct: { ...box, phase: 'Stopped', node: '' } });
    expect(s.cts.get('tailvm/box')?.phase).toBe('Stopped');
    s.apply({ type: 'ct', op: 'delete', namespace: 'tailvm', name: 'box' });
    expect(s.cts.size).toBe(0);
    expect(s.vms.get('tailvm/box')).toBeDefined();
    expect(s.prefill([], [], [box])).toBe(false); // a snapshot already arrived
  });

  it('takes CTs from the REST prefill', () => {
    const s = new FleetState();
    expect(s.prefill([], [], [ct('box')])).toBe(true);
    expect(s.cts.list().map((c) => c.name)).toEqual(['box']);
  });

  it('lists tasks newest first and updates one in place', () => {
    const s = new FleetState();
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [],
      nodes: [],
      tasks: [task('t1', '2026-01-01T00:00:01Z')],
      demo: false,
      cluster: 'c',
      ready: true,
    });
    s.apply({ type: 'task', task: task('t2', '2026-01-01T00:00:02Z') });
    expect(s.tasks().map((t) => t.id)).toEqual(['t2', 't1']);
    s.apply({ type: 'task', task: { ...task('t1', '2026-01-01T00:00:01Z'), status: 'done' } });
    expect(s.task('t1')?.status).toBe('done');
    expect(s.tasks()).toHaveLength(2);
  });

  it('takes a REST prefill only before the first snapshot', () => {
    const s = new FleetState();
    expect(s.prefill([vm('a')], [node('n1')])).toBe(true);
    expect(s.synced).toBe(true);
    expect(s.vms.size).toBe(1);
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [vm('b'), vm('c')],
      nodes: [],
      tasks: [],
      demo: true,
      cluster: 'demo',
      ready: true,
    });
    expect(s.prefill([vm('old')], [])).toBe(false);
    expect(s.vms.list().map((v) => v.name)).toEqual(['b', 'c']);
  });

  it('shows a first page, then the whole list replaces it; neither once the stream has spoken', () => {
    const s = new FleetState();
    expect(s.prefillFirst([vm('a')], [node('n1')], [ct('box')])).toBe(true);
    expect([s.synced, s.partial, s.vms.size, s.cts.size]).toEqual([true, true, 1, 1]);
    // A second first page (a late answer) never replaces rows already held.
    expect(s.prefillFirst([vm('z')], [], [])).toBe(false);
    expect(s.prefill([vm('a'), vm('b'), vm('c')], [node('n1')], [ct('box')])).toBe(true);
    expect([s.partial, s.vms.size]).toEqual([false, 3]);
    s.apply({ type: 'state', tasks: [task('t1', '2026-01-01T00:00:01Z')], demo: false, cluster: 'c', ready: true });
    expect([s.streamed, s.vms.size, s.tasks().length]).toEqual([true, 3, 1]);
    expect(s.prefill([vm('old')], [])).toBe(false);
    expect(s.prefillFirst([vm('old')], [], [])).toBe(false);
  });

  it("keeps the whole list's counts while only the first page is held, and drops them with the whole list", () => {
    const s = new FleetState();
    expect(s.prefillFirst([vm('a'), vm('b')], [node('n1')], [], { total: 50_000, running: 25_000 })).toBe(true);
    expect(s.partialCounts).toEqual({ total: 50_000, running: 25_000 });
    expect(s.prefill([vm('a'), vm('b'), vm('c')], [node('n1')])).toBe(true);
    expect(s.partialCounts).toBeUndefined();
    const snapshotted = new FleetState();
    snapshotted.prefillFirst([vm('a')], [], [], { total: 9, running: 1 });
    snapshotted.apply({
      type: 'snapshot',
      vms: [vm('a'), vm('b')],
      cts: [],
      nodes: [],
      tasks: [],
      demo: true,
      cluster: 'demo',
      ready: true,
    });
    expect([snapshotted.partial, snapshotted.partialCounts]).toEqual([false, undefined]);
    // A first page without counts (an older server) has none.
    const plain = new FleetState();
    plain.prefillFirst([vm('a')], [], []);
    expect(plain.partialCounts).toBeUndefined();
  });

  it('takes the rest of a snapshot from a `state` event and keeps the listed rows, then the changes since', () => {
    const s = new FleetState();
    s.prefill([vm('a'), vm('b')], [node('n1')]);
    s.apply({
      type: 'state',
      tasks: [task('t1', '2026-01-01T00:00:01Z'), task('t2', '2026-01-01T00:00:02Z')],
      demo: true,
      cluster: 'demo',
      ready: false,
    });
    expect([s.demo, s.cluster, s.clusterReady]).toEqual([true, 'demo', false]);
    expect(s.tasks().map((t) => t.id)).toEqual(['t2', 't1']);
    expect(s.vms.list().map((v) => v.name)).toEqual(['a', 'b']);
    s.apply({ type: 'vm', op: 'upsert', vm: vm('a', { status: 'Running' }) });
    s.apply({ type: 'vm', op: 'delete', namespace: 'tailvm', name: 'b' });
    expect(s.vms.list().map((v) => `${v.name} ${v.status}`)).toEqual(['a Running']);
  });

  it('re-keys the listed rows when the `state` names another default cluster than the lists suggested', () => {
    const s = new FleetState();
    // Only the second cluster has VMs: the lists alone look like one cluster, so every key is plain.
    s.prefill([vm('a', { context: 'lab' })], [{ ...node('n1'), context: 'lab' }]);
    expect(s.vms.get('tailvm/a')).toBeDefined();
    const status = (context: string, isDefault: boolean) => ({
      context,
      name: context,
      server: '',
      demo: true,
      default: isDefault,
      ready: true,
      problems: [],
    });
    s.apply({
      type: 'state',
      tasks: [],
      demo: true,
      cluster: 'home',
      ready: true,
      clusters: [status('home', true), status('lab', false)],
    });
    expect(s.defaultContext).toBe('home');
    expect(s.vms.get('tailvm/a')).toBeUndefined();
    expect(s.vms.get('lab//tailvm/a')?.name).toBe('a');
    expect(s.nodes.get('lab//n1')?.name).toBe('n1');
    s.apply({ type: 'vm', op: 'delete', namespace: 'tailvm', name: 'a', context: 'lab' });
    expect(s.vms.size).toBe(0);
  });

  it('takes cluster readiness from the snapshot, so a late joiner sees an unreachable cluster at once', () => {
    const s = new FleetState();
    s.apply({ type: 'snapshot', cts: [], vms: [], nodes: [], tasks: [], demo: false, cluster: 'c', ready: false });
    expect(s.clusterReady).toBe(false);
  });

  it('keeps rows of several clusters apart: the same namespace/name and node names on two clusters', () => {
    const s = new FleetState();
    const status = (context: string, ready: boolean, isDefault: boolean) => ({
      context,
      name: context,
      server: '',
      demo: true,
      default: isDefault,
      ready,
      problems: ready ? [] : ['watch failing'],
    });
    s.apply({
      type: 'snapshot',
      cts: [],
      vms: [vm('a'), vm('a', { context: 'lab' })],
      nodes: [node('n1'), { ...node('n1'), context: 'lab' }],
      tasks: [],
      demo: true,
      cluster: 'home',
      ready: true,
      clusters: [status('home', true, true), status('lab', true, false)],
    });
    expect(s.vms.size).toBe(2);
    expect(s.nodes.size).toBe(2);
    // The default cluster's rows keep their plain keys, so pages addressed by namespace/name find them.
    expect(s.vms.get('tailvm/a')?.context).toBe('home');
    s.apply({ type: 'vm', op: 'delete', namespace: 'tailvm', name: 'a', context: 'lab' });
    expect(s.vms.list().map((v) => v.context)).toEqual(['home']);
    s.apply({ type: 'node', op: 'delete', name: 'n1', context: 'lab' });
    expect(s.nodes.list().map((n) => n.context)).toEqual(['home']);
    // Another cluster going stale is shown on its own subtree; the banner stays about the default one.
    s.apply({
      type: 'ready',
      ready: false,
      context: 'lab',
      clusters: [status('home', true, true), status('lab', false, false)],
    });
    expect(s.clusterReady).toBe(true);
    expect(s.clusters.map((c) => c.ready)).toEqual([true, false]);
  });

  it('tracks cluster readiness', () => {
    const s = new FleetState();
    s.apply({ type: 'ready', ready: false });
    expect(s.clusterReady).toBe(false);
    expect(s.notifier.getVersion()).toBe(1);
  });
});
