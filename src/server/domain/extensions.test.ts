/** Extensions on the fake cluster: state read from the ConfigMap, extensions no longer shipped, a failed apply. */
import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { FakeCluster } from '../testing/fake-cluster';
import { EXTENSIONS_CONFIGMAP, Extensions } from './extensions';
import { identityFromHeaders, parseAdmins } from './identity';
import { createCorralServices } from './services';

const caller = { identity: identityFromHeaders({ 'tailscale-user-login': 'alice' }, parseAdmins(undefined)) };

function setup() {
  const cluster = new FakeCluster();
  const services = createCorralServices(cluster, { defaultNamespace: 'tailvm' });
  return { cluster, services, extensions: new Extensions(services.deps) };
}

describe('extensions', () => {
  it('lists an installed extension this Corral no longer ships (inStore false) and reads a corrupt state as empty', async () => {
    const { cluster, services, extensions } = setup();
    cluster.put('ConfigMap', {
      metadata: { name: EXTENSIONS_CONFIGMAP, namespace: 'tailvm', resourceVersion: '1' },
      data: { 'installed.json': JSON.stringify({ retired: { version: '0.0.9', installedAt: 'x', by: 'bob' } }) },
    });
    const rows = await extensions.list();
    expect(rows.find((r) => r.name === 'retired')).toMatchObject({ installed: true, inStore: false, version: '0.0.9' });
    expect(rows.find((r) => r.name === 'bootc')).toMatchObject({ installed: false, inStore: true });
    cluster.put('ConfigMap', {
      metadata: { name: EXTENSIONS_CONFIGMAP, namespace: 'tailvm', resourceVersion: '2' },
      data: { 'installed.json': '{not json' },
    });
    expect((await extensions.list()).map((r) => [r.name, r.installed])).toEqual([
      ['bootc', false],
      ['snapshot-schedules', false],
      ['power-schedules', false],
    ]);
    services.close();
  });

  it('a failed apply fails the task, records nothing and says which object', async () => {
    const { cluster, services, extensions } = setup();
    cluster.failOn = { verb: 'apply', kind: 'Role', error: new CorralError('FORBIDDEN', 'roles is forbidden') };
    await expect(extensions.install(caller, 'bootc')).rejects.toThrow('roles is forbidden');
    const task = services.journal.list()[0]!;
    expect(task).toMatchObject({ action: 'extension-install', status: 'error' });
    expect(task.log).toContain('applied ServiceAccount tailvm/corral-bootc-builder');
    expect(await cluster.fetch('ConfigMap', 'tailvm', EXTENSIONS_CONFIGMAP)).toBeUndefined();
    services.close();
  });
});
