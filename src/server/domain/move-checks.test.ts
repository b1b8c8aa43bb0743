import { describe, expect, it } from 'vitest';
import type { MoveRefusal } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import {
  answerLists,
  busyRefusals,
  claimDisk,
  clusterDestination,
  clusterRefusals,
  namespaceRefusal,
  planSource,
  snapshotsLeft,
  sourceDownRefusal,
  storageClassRefusal,
} from './move-checks';
import type { MemberRef } from './pools-path';
import { TaskJournal } from './tasks';
import type { VolumeRef } from './vm-facts';

/** What a stub cluster holds: its cache (kind/namespace/name), what a live read finds, and whether it answers. */
interface Side {
  context: string;
  ready?: boolean;
  cached?: Record<string, KObject>;
  live?: Record<string, KObject>;
  lists?: Record<string, KObject[]>;
  /** Every live read asked, as `kind/name`. */
  asked?: string[];
}

const obj = (status: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): KObject =>
  ({ metadata: {}, status, spec }) as KObject;
const KUBEVIRT_ON = {
  metadata: {},
  spec: { configuration: { developerConfiguration: { featureGates: ['VMExport'] } } },
} as KObject;
const CDI_READY = obj({ uploadProxyURL: 'https://cdi-uploadproxy' });

function stub(side: Side): DomainDeps {
  const asked = (side.asked ??= []);
  return {
    journal: new TaskJournal(),
    cluster: {
      info: { context: side.context },
      isReady: () => side.ready ?? true,
      readinessProblems: () => ['GET /api timed out'],
      cache: { get: (kind: string, ns: string, name: string) => side.cached?.[`${kind}/${ns}/${name}`] },
      fetch: async (kind: string, _ns: string | undefined, name: string) => {
        asked.push(`${kind}/${name}`);
        return side.live?.[`${kind}/${name}`];
      },
      fetchList: async (kind: string) => {
        const list = side.lists?.[kind];
        if (!list) throw new Error(`${kind}: the server could not find the requested resource`);
        return list;
      },
    },
  } as unknown as DomainDeps;
}

/** A cluster that answers, can export (KubeVirt's VMExport gate on) and receive (CDI's upload proxy). */
const healthy = (context: string, more: Partial<Side> = {}): Side => ({
  context,
  ...more,
  live: { 'CDIConfig/config': CDI_READY, ...more.live },
  lists: { KubeVirt: [KUBEVIRT_ON], ...more.lists },
});

const REF: MemberRef = { backend: 'kubevirt', context: 'home', namespace: 'tailvm', name: 'web' };

function collect(): { refusals: MoveRefusal[]; refuse: (reason: string, remedy: string) => void } {
  const { refusals, refuse } = answerLists();
  return { refusals, refuse };
}

describe('the shared move checks', () => {
  it('answerLists starts empty and refuse adds a reason with its remedy', () => {
    const lists = answerLists();
    expect([lists.refusals, lists.warnings, lists.dropped]).toEqual([[], [], []]);
    lists.refuse('why', 'what to do');
    expect(lists.refusals).toEqual([{ reason: 'why', remedy: 'what to do' }]);
  });

  it('clusterDestination defaults to the first served cluster, the source namespace and name', () => {
    const home = stub(healthy('home'));
    const d = clusterDestination(home, { ref: 'kubevirt/home/tailvm/web', toBackend: 'kubevirt' }, REF);
    expect([d.toContext, d.target, d.toNamespace, d.name, d.at]).toEqual([
      'home',
      home,
      'tailvm',
      'web',
      'context home',
    ]);
    const named = clusterDestination(
      home,
      { ref: 'kubevirt/home/tailvm/web', toBackend: 'kubevirt', toContext: 'home', toNamespace: 'x', name: 'y' },
      REF,
    );
    expect([named.toNamespace, named.name]).toEqual(['x', 'y']);
    expect(() =>
      clusterDestination(home, { ref: 'kubevirt/home/tailvm/web', toBackend: 'kubevirt', toContext: 'lab' }, REF),
    ).toThrow(/^toContext: context lab is not served by this Corral \(contexts: home\)/);
  });

  it('planSource names a KubeVirt source and whether it runs', () => {
    expect(planSource(REF, true)).toEqual({
      backend: 'kubevirt',
      context: 'home',
      namespace: 'tailvm',
      name: 'web',
      running: true,
    });
  });

  it('passes two healthy clusters, and refuses the same cluster and namespace', async () => {
    const [home, lab] = [stub(healthy('home')), stub(healthy('lab'))];
    const ok = collect();
    expect(await clusterRefusals(home, lab, REF, 'tailvm', ok.refuse)).toBe('');
    expect(ok.refusals).toEqual([]);
    const same = collect();
    await clusterRefusals(home, home, REF, 'tailvm', same.refuse);
    expect(same.refusals).toEqual([
      {
        reason: 'same cluster and namespace as the source (home, tailvm)',
        remedy: 'pick another cluster, or another namespace (toNamespace) to move within this one',
      },
    ]);
    const otherNs = collect();
    await clusterRefusals(home, home, REF, 'elsewhere', otherNs.refuse);
    expect(otherNs.refusals).toEqual([]);
  });

  it('refuses clusters that do not answer without asking them more, and answers why the destination does not', async () => {
    const homeSide = healthy('home', { ready: false });
    const labSide = healthy('lab', { ready: false });
    const { refusals, refuse } = collect();
    const down = await clusterRefusals(stub(homeSide), stub(labSide), REF, 'tailvm', refuse);
    expect(down).toBe('context lab does not answer (stale): GET /api timed out');
    expect(refusals).toEqual([
      {
        reason: 'context home does not answer (stale): GET /api timed out',
        remedy: 'wait until home answers again (GET /api/contexts says why)',
      },
      {
        reason: 'context lab does not answer (stale): GET /api timed out',
        remedy: 'wait until lab answers again, or pick another destination',
      },
    ]);
    expect([homeSide.asked, labSide.asked]).toEqual([[], []]);
  });

  it('refuses a source that cannot export and a destination that cannot receive, each with its remedy', async () => {
    const home = stub(healthy('home', { lists: { KubeVirt: [obj()] } }));
    const lab = stub({ context: 'lab' });
    const { refusals, refuse } = collect();
    await clusterRefusals(home, lab, REF, 'tailvm', refuse);
    expect(refusals).toEqual([
      {
        reason: 'the KubeVirt "VMExport" feature gate is off in context home: its disks cannot be exported',
        remedy: 'turn the gate on (Health page: gate-vmexport → Fix), then try again',
      },
      {
        reason: 'context lab has no CDI (CDIConfig config is missing): the disks cannot be uploaded',
        remedy: 'install CDI in lab or set spec.uploadProxyURLOverride on its CDIConfig',
      },
    ]);
  });

  it('sourceDownRefusal answers why the source does not answer, and nothing when it does', () => {
    const down = collect();
    expect(sourceDownRefusal(stub({ context: 'home', ready: false }), REF, down.refuse)).toMatch(/does not answer/);
    expect(down.refusals).toHaveLength(1);
    const up = collect();
    expect(sourceDownRefusal(stub({ context: 'home' }), REF, up.refuse)).toBe('');
    expect(up.refusals).toEqual([]);
  });

  it('refuses what is being deleted or already moving, a CT named as one', () => {
    const home = stub(healthy('home'));
    const vm = collect();
    busyRefusals(home, REF, 'VM', 'move', true, vm.refuse);
    const task = home.journal.start('move', 'tailvm/web', 'alice');
    busyRefusals(home, REF, 'VM', 'move', false, vm.refuse);
    busyRefusals(home, REF, 'VM', 'ct-move', false, vm.refuse);
    expect(vm.refusals).toEqual([
      { reason: 'VM tailvm/web is being deleted', remedy: 'nothing to move; wait until it is gone' },
      { reason: `a move of tailvm/web is already running (task ${task.id})`, remedy: 'wait until it ends' },
    ]);
    const ct = collect();
    const ctTask = home.journal.start('ct-move', 'tailvm/web', 'alice');
    busyRefusals(home, REF, 'CT', 'ct-move', true, ct.refuse);
    expect(ct.refusals.map((r) => r.reason)).toEqual([
      'CT tailvm/web is being deleted',
      `a move of CT tailvm/web is already running (task ${ctTask.id})`,
    ]);
    task.done();
    ctTask.done();
    const ended = collect();
    busyRefusals(home, REF, 'CT', 'ct-move', false, ended.refuse);
    expect(ended.refusals).toEqual([]);
  });

  it('refuses a namespace the destination lacks, naming the kubectl that creates it', async () => {
    const lab = stub(healthy('lab', { live: { 'Namespace/tailvm': obj() } }));
    const { refusals, refuse } = collect();
    await namespaceRefusal(lab, 'tailvm', refuse);
    await namespaceRefusal(lab, 'nowhere', refuse);
    expect(refusals).toEqual([
      {
        reason: 'namespace nowhere does not exist in context lab',
        remedy: 'create it (kubectl --context lab create namespace nowhere) or pick another (toNamespace)',
      },
    ]);
  });

  it("refuses a StorageClass the destination lacks (never the default class ''), asking once per class", async () => {
    const labSide = healthy('lab', { live: { 'StorageClass/fast': obj() } });
    const lab = stub(labSide);
    const { refusals, refuse } = collect();
    const known = new Map<string, boolean>();
    await storageClassRefusal(lab, '', 'disk a', 'move it', refuse, known);
    await storageClassRefusal(lab, 'fast', 'disk a', 'move it', refuse, known);
    await storageClassRefusal(lab, 'slow', 'disk b', 'move it', refuse, known);
    await storageClassRefusal(lab, 'slow', 'disk c', 'move it', refuse, known);
    expect(refusals).toEqual(
      ['disk b', 'disk c'].map((disk) => ({
        reason: `StorageClass slow (${disk}) is missing in context lab`,
        remedy: 'create StorageClass slow in lab, or move it',
      })),
    );
    expect(labSide.asked).toEqual(['StorageClass/fast', 'StorageClass/slow']);
  });

  it('claimDisk answers a Bound claim, and refuses a missing or unbound one and a DataVolume not Succeeded', () => {
    const disk = (claim: string, kind: VolumeRef['kind'] = 'dataVolume'): VolumeRef => ({
      volume: `vol-${claim}`,
      kind,
      claim,
      hotpluggable: false,
    });
    const home = stub({
      context: 'home',
      cached: {
        'PersistentVolumeClaim/tailvm/bound': obj({ phase: 'Bound' }),
        'DataVolume/tailvm/bound': obj({ phase: 'Succeeded' }),
        'PersistentVolumeClaim/tailvm/pending': obj({ phase: 'Pending' }),
        'PersistentVolumeClaim/tailvm/importing': obj({ phase: 'Bound' }),
        'DataVolume/tailvm/importing': obj({ phase: 'ImportInProgress' }),
      },
    });
    const { refusals, refuse } = collect();
    expect(claimDisk(home, 'tailvm', disk('bound'), refuse)?.status).toEqual({ phase: 'Bound' });
    expect(claimDisk(home, 'tailvm', disk('gone'), refuse)).toBeUndefined();
    expect(claimDisk(home, 'tailvm', disk('pending'), refuse)).toBeUndefined();
    expect(claimDisk(home, 'tailvm', disk('importing'), refuse)).toBeDefined();
    expect(claimDisk(home, 'tailvm', disk('importing', 'persistentVolumeClaim'), refuse)).toBeDefined();
    expect(refusals).toEqual([
      {
        reason: 'disk vol-gone (claim gone) is missing: nothing to export',
        remedy: 'remove disk vol-gone from the VM',
      },
      {
        reason: 'disk vol-pending (claim pending) is not bound yet: nothing to export',
        remedy: 'wait until its claim is Bound',
      },
      {
        reason: 'disk vol-importing (DataVolume importing) is ImportInProgress',
        remedy: 'wait until it has Succeeded',
      },
    ]);
  });

  it("counts the VM's own snapshots left behind; none, or none readable, is nothing", async () => {
    const snap = (vm: string) => obj({}, { source: { kind: 'VirtualMachine', name: vm } });
    const left = (snaps: KObject[] | undefined) =>
      snapshotsLeft(stub({ context: 'home', ...(snaps ? { lists: { VirtualMachineSnapshot: snaps } } : {}) }), REF);
    expect(await left([snap('web'), snap('db')])).toBe('1 snapshot: they stay with the source');
    expect(await left([snap('web'), snap('web')])).toBe('2 snapshots: they stay with the source');
    expect(await left([snap('db')])).toBeUndefined();
    expect(await left(undefined)).toBeUndefined();
  });
});
