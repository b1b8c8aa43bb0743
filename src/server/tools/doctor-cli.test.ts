/** `corral doctor` exit codes and output, over the in-memory cluster: 0 healthy (warnings allowed), 1 a failing check, 2 usage. */
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../testing/fake-cluster';
import { runDoctorCli } from './doctor-cli';

/** A cluster with everything Corral needs. */
function healthy(): FakeCluster {
  const c = new FakeCluster();
  c.put('KubeVirt', {
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: 'kubevirt', resourceVersion: '1' },
    spec: {
      configuration: {
        developerConfiguration: { featureGates: ['Snapshot', 'HotplugVolumes', 'ExpandDisks', 'VMExport'] },
      },
    },
    status: { phase: 'Deployed', conditions: [{ type: 'Available', status: 'True' }] },
  });
  c.put('CDI', { kind: 'CDI', metadata: { name: 'cdi' }, status: { phase: 'Deployed' } });
  c.put('StorageClass', {
    metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'driver.longhorn.io',
    allowVolumeExpansion: true,
  });
  c.put('VolumeSnapshotClass', { metadata: { name: 'fast-snap' }, driver: 'driver.longhorn.io' });
  c.put('Namespace', { metadata: { name: 'tailvm' } });
  c.put('NetworkAttachmentDefinition', { metadata: { name: 'lan', namespace: 'tailvm' } });
  c.put('Node', { metadata: { name: 'n1' }, status: { nodeInfo: { kubeletVersion: 'v1.32.4' } } });
  return c;
}

async function run(cluster: FakeCluster, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDoctorCli(
    ['--namespace', 'tailvm', ...argv],
    { out: (t) => out.push(t), err: (t) => err.push(t) },
    () => ({ cluster, close: async () => undefined }),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('corral doctor', () => {
  it('exits 0 on a healthy cluster and prints every check by area', async () => {
    const r = await run(healthy());
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^kubevirt$/m);
    expect(r.out).toMatch(/✔ ok {2}\s*gate-snapshot/);
    expect(r.out).toMatch(/\n\d+ ok, 0 warn, 0 fail$/);
  });

  it('exits 0 with warnings only', async () => {
    const c = healthy();
    c.groups = c.groups.filter((g) => g !== 'metrics.k8s.io');
    const r = await run(c);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/! warn\s+metrics-server/);
    expect(r.out).toMatch(/1 warn, 0 fail$/);
  });

  it('exits 1 when a check fails, naming the fix', async () => {
    const c = healthy();
    c.denied.add('delete virtualmachines.kubevirt.io');
    c.put('KubeVirt', {
      ...(await c.fetch('KubeVirt', 'kubevirt', 'kubevirt'))!,
      spec: {
        configuration: { developerConfiguration: { featureGates: ['HotplugVolumes', 'ExpandDisks', 'VMExport'] } },
      },
    });
    const r = await run(c);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/✖ fail\s+gate-snapshot\s+the KubeVirt Snapshot feature gate is off/);
    expect(r.out).toContain('fix: add Snapshot to spec.configuration.developerConfiguration.featureGates');
    expect(r.out).toMatch(/✖ fail\s+rbac\s+1 of \d+ permissions are missing in all namespaces: delete virtualmachines/);
  });

  it('--fix applies the fixes, prints what changed, and exits by the checks after it', async () => {
    const c = healthy();
    c.objects.get('Namespace')!.clear();
    const r = await run(c, '--fix');
    expect(r.out).toContain('fixed: created namespace tailvm');
    expect(r.code).toBe(0);
    // Something Corral cannot fix keeps the exit status at 1 after --fix.
    c.denied.add('list nodes');
    expect((await run(c, '--fix')).code).toBe(1);
  });

  it('--json prints the rows (and with --fix the fixes too)', async () => {
    const r = await run(healthy(), '--json');
    const rows = JSON.parse(r.out) as { name: string; status: string }[];
    expect(rows.find((x) => x.name === 'api')).toMatchObject({ status: 'ok' });
    const c = healthy();
    c.objects.get('Namespace')!.clear();
    const fixed = JSON.parse((await run(c, '--fix', '--json')).out) as { fixed: string[]; checks: unknown[] };
    expect(fixed.fixed).toEqual(['created namespace tailvm']);
    expect(fixed.checks.length).toBeGreaterThan(10);
  });

  it.each([[['--bogus']], [['--context']], [['stray']], [['--kubeconfig', '--json']]])(
    'refuses %j with usage and exit 2',
    async (argv) => {
      const r = await run(healthy(), ...argv);
      expect(r.code).toBe(2);
      expect(r.err).toContain('usage: corral doctor');
    },
  );

  it('exits 1 with the reason when there is no cluster to check', async () => {
    const err: string[] = [];
    const code = await runDoctorCli([], { out: () => undefined, err: (t) => err.push(t) }, () => {
      throw new Error('no cluster configured: set KUBECONFIG');
    });
    expect(code).toBe(1);
    expect(err.join('')).toBe('corral doctor: no cluster configured: set KUBECONFIG');
  });
});
