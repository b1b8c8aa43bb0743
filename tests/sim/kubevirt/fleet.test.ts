import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness, type Wire } from './harness.js';

const KV = { group: 'kubevirt.io', version: 'v1' };

async function vmsOf(h: Harness, namespace: string, labelSelector?: string): Promise<Wire[]> {
  const list = (await h.custom.listNamespacedCustomObject({
    ...KV,
    namespace,
    plural: 'virtualmachines',
    ...(labelSelector ? { labelSelector } : {}),
  })) as Wire;
  return list.items as Wire[];
}

async function clusterList(h: Harness, group: string, version: string, plural: string): Promise<Wire[]> {
  return ((await h.custom.listClusterCustomObject({ group, version, plural })) as Wire).items as Wire[];
}

describe('demo fleet', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ fleet: 'demo' });
  });
  afterAll(async () => {
    await h.cluster.close();
  });

  it('has the baseline install: nodes with CPU vendors, KubeVirt/CDI CRs, storage, instancetypes', async () => {
    const nodes = (await h.core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name)).toEqual(['corral-1', 'corral-2', 'corral-3']);
    const vendor = (name: string) =>
      Object.keys(nodes.find((n) => n.metadata?.name === name)!.metadata!.labels!).filter((l) =>
        l.startsWith('cpu-vendor.node.kubevirt.io/'),
      );
    expect(vendor('corral-1')).toEqual(['cpu-vendor.node.kubevirt.io/Intel']);
    expect(vendor('corral-2')).toEqual(['cpu-vendor.node.kubevirt.io/Intel']);
    expect(vendor('corral-3')).toEqual(['cpu-vendor.node.kubevirt.io/AMD']);
    expect(nodes[0]!.metadata!.labels!['node-role.kubernetes.io/control-plane']).toBe('true');
    expect(nodes[0]!.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(nodes[0]!.status?.nodeInfo?.kubeletVersion).toMatch(/^v1\.32\./);
    for (const ns of ['default', 'kube-system', 'kubevirt', 'cdi', 'tailvm'])
      expect((await h.core.readNamespace({ name: ns })).status?.phase).toBe('Active');

    const kv = (await h.custom.getNamespacedCustomObject({
      ...KV,
      namespace: 'kubevirt',
      plural: 'kubevirts',
      name: 'kubevirt',
    })) as Wire;
    expect(kv.status.phase).toBe('Deployed');
    expect(kv.spec.configuration.developerConfiguration.featureGates).toEqual(
      expect.arrayContaining(['Snapshot', 'HotplugVolumes', 'VMExport', 'LiveMigration']),
    );
    expect(kv.spec.configuration.vmRolloutStrategy).toBe('LiveUpdate');
    const cdi = (await clusterList(h, 'cdi.kubevirt.io', 'v1beta1', 'cdis'))[0]!;
    expect(cdi.status.phase).toBe('Deployed');

    const classes = await clusterList(h, 'storage.k8s.io', 'v1', 'storageclasses');
    const longhorn = classes.find((c) => c.metadata.name === 'longhorn')!;
    expect(longhorn).toMatchObject({
      allowVolumeExpansion: true,
      metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    });
    expect(classes.map((c) => c.metadata.name)).toContain('nfs');
    expect((await clusterList(h, 'snapshot.storage.k8s.io', 'v1', 'volumesnapshotclasses'))[0]!.driver).toBe(
      longhorn.provisioner,
    );
    const instancetypes = await clusterList(
      h,
      'instancetype.kubevirt.io',
      'v1beta1',
      'virtualmachineclusterinstancetypes',
    );
    expect(instancetypes).toHaveLength(65);
    expect(instancetypes.find((i) => i.metadata.name === 'u1.medium')!.spec).toMatchObject({
      cpu: { guest: 1 },
      memory: { guest: '4Gi' },
    });
    const preferences = await clusterList(h, 'instancetype.kubevirt.io', 'v1beta1', 'virtualmachineclusterpreferences');
    expect(preferences).toHaveLength(57);
  });

  it('has VMs in varied states, tagged and with a template', async () => {
    const expected: Record<string, string> = {
      web: 'Running',
      api: 'Running',
      db: 'Running',
      files: 'Running',
      'ci-runner': 'Paused',
      sandbox: 'Stopped',
      bigdata: 'ErrorUnschedulable',
      'fedora-template': 'Stopped',
    };
    await eventually(async () => {
      const vms = await vmsOf(h, 'tailvm');
      const byName = Object.fromEntries(vms.map((v) => [v.metadata.name, v.status?.printableStatus]));
      for (const [name, printable] of Object.entries(expected)) expect(byName[name], name).toBe(printable);
      expect(['Provisioning', 'Starting', 'Running']).toContain(byName.installer);
    });
    const prod = (await vmsOf(h, 'tailvm', 'corral.dev/tag.prod')).map((v) => v.metadata.name);
    expect(prod.sort()).toEqual(['api', 'db', 'files', 'web']);
    const templates = await vmsOf(h, 'tailvm', 'corral.dev/template=true');
    expect(templates.map((v) => v.metadata.name)).toEqual(['fedora-template']);
    expect(templates[0]!.spec.runStrategy).toBe('Halted');

    const vmis = (
      (await h.custom.listNamespacedCustomObject({
        ...KV,
        namespace: 'tailvm',
        plural: 'virtualmachineinstances',
      })) as Wire
    ).items as Wire[];
    const nodeOf = (name: string) => vmis.find((v) => v.metadata.name === name)?.status.nodeName;
    expect(new Set(['web', 'api', 'db'].map(nodeOf)).size).toBe(3);
    expect(vmis.find((v) => v.metadata.name === 'web')!.status.interfaces.map((i: Wire) => i.name)).toEqual([
      'default',
      'lan',
    ]);
    const db = vmis.find((v) => v.metadata.name === 'db')!;
    expect(db.status.conditions.find((c: Wire) => c.type === 'LiveMigratable').status).toBe('True');
    const files = vmis.find((v) => v.metadata.name === 'files')!;
    expect(files.status.conditions.find((c: Wire) => c.type === 'LiveMigratable').reason).toBe(
      'DisksNotLiveMigratable',
    );
    const events = (await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=web' }))
      .items;
    expect(events.map((e) => `${e.involvedObject.kind}/${e.reason}`)).toEqual(
      expect.arrayContaining([
        'VirtualMachine/SuccessfulCreate',
        'VirtualMachineInstance/Created',
        'VirtualMachineInstance/Started',
      ]),
    );
  });

  it('has the LAN network, data volumes and two containers', async () => {
    const nad = (await h.custom.getNamespacedCustomObject({
      group: 'k8s.cni.cncf.io',
      version: 'v1',
      namespace: 'tailvm',
      plural: 'network-attachment-definitions',
      name: 'lan',
    })) as Wire;
    expect(JSON.parse(nad.spec.config as string)).toMatchObject({ type: 'bridge', name: 'lan' });
    const dvs = (
      (await h.custom.listNamespacedCustomObject({
        group: 'cdi.kubevirt.io',
        version: 'v1beta1',
        namespace: 'tailvm',
        plural: 'datavolumes',
      })) as Wire
    ).items as Wire[];
    expect(dvs.map((d) => d.metadata.name).sort()).toEqual(['db-rootdisk', 'installer-iso', 'installer-rootdisk']);
    const iso = dvs.find((d) => d.metadata.name === 'installer-iso')!;
    expect(iso.metadata.ownerReferences[0]).toMatchObject({ kind: 'VirtualMachine', name: 'installer' });
    for (const ct of ['devbox', 'pihole']) {
      const claim = await h.core.readNamespacedPersistentVolumeClaim({ namespace: 'tailvm', name: `${ct}-data` });
      expect(claim.metadata?.labels).toMatchObject({ 'corral.dev/ct': 'true', 'corral.dev/ct-name': ct });
      expect(JSON.parse(claim.metadata!.annotations!['corral.ct/spec']!)).toMatchObject({
        name: ct,
        namespace: 'tailvm',
      });
      await eventually(async () => {
        const pod = await h.core.readNamespacedPod({ namespace: 'tailvm', name: ct });
        expect(pod.metadata?.labels?.['corral.dev/ct-name']).toBe(ct);
        expect(pod.status?.phase).toBe('Running');
      }, 15_000);
    }
  });
});

describe('empty fleet', () => {
  it('has the baseline and no VMs', async () => {
    const h = await startHarness({ fleet: 'empty' });
    try {
      expect((await h.core.listNode()).items).toHaveLength(3);
      expect(await vmsOf(h, 'tailvm')).toEqual([]);
      expect((await h.core.listPodForAllNamespaces()).items).toEqual([]);
    } finally {
      await h.cluster.close();
    }
  });
});

describe('generated fleet', () => {
  it('seeds N VMs in their final states in seconds', async () => {
    const started = Date.now();
    const h = await startHarness({ fleet: 1000 });
    const seededMs = Date.now() - started;
    try {
      expect(seededMs).toBeLessThan(30_000);
      const counts = await eventually(async () => {
        const all = ((await h.custom.listClusterCustomObject({ ...KV, plural: 'virtualmachines' })) as Wire)
          .items as Wire[];
        expect(all).toHaveLength(1000);
        const tally: Record<string, number> = {};
        for (const vm of all)
          tally[vm.status?.printableStatus ?? 'none'] = (tally[vm.status?.printableStatus ?? 'none'] ?? 0) + 1;
        expect(tally.none).toBeUndefined();
        return tally;
      }, 20_000);
      expect(counts).toEqual({ Running: 800, Paused: 100, Stopped: 100 });
      const namespaces = new Set(
        (((await h.custom.listClusterCustomObject({ ...KV, plural: 'virtualmachines' })) as Wire).items as Wire[]).map(
          (v) => v.metadata.namespace,
        ),
      );
      expect(namespaces).toEqual(new Set(['fleet-00']));
      const pods = (await h.core.listPodForAllNamespaces({ labelSelector: 'kubevirt.io=virt-launcher' })).items;
      expect(pods).toHaveLength(900);
      expect(new Set(pods.map((p) => p.status?.podIP)).size).toBe(900);
    } finally {
      await h.cluster.close();
    }
  }, 90_000);
});
