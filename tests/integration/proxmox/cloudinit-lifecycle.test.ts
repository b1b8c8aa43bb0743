/**
 * Cloud-init across a VM's life, on one embedded cluster: a REST create with an SSH key (what the create wizard
 * sends) goes through the cloud-init domain, so its settings are editable afterwards (REST and PVE's `sshkeys`), while
 * hand-written user data stays as written; a pending change of a running VM survives a restart of Corral (the state
 * is in the cluster) and "Regenerate image" still applies it; and a VM from before the cloud-init domain, whose
 * plaintext `ci*` keys sit in the Proxmox extras annotation, is migrated the first time the Proxmox API reads or
 * writes its config — the password hashed into the Secret, the annotation rid of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBd7m1s0yq3Qw0cXkqf5JtY0m2QmYq1m0Xz8Y2y3fW4u wizard@laptop';
const EXTRAS = 'corral.io/proxmox-config';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const rest = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${h.corral.url}/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const kube = async (path: string, init?: RequestInit) =>
  (await (await fetch(`${h.sim.url}${path}`, init)).json()) as {
    metadata: { annotations?: Record<string, string> };
    data?: Record<string, string>;
    status?: { printableStatus?: string };
  };
const vmPath = (name: string) => `/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/${name}`;
const secretText = async (name: string) =>
  Object.fromEntries(
    Object.entries((await kube(`/api/v1/namespaces/tailvm/secrets/${name}-cloudinit`)).data ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v, 'base64').toString('utf8'),
    ]),
  );
const vmidOf = async (name: string) => ((await rest('GET', `/vms/tailvm/${name}/row`)).body as { vmid: number }).vmid;
const waitRest = async (task: unknown) =>
  expect
    .poll(async () => ((await rest('GET', `/tasks/${String(task)}`)).body as { status?: string }).status, {
      timeout: 30_000,
    })
    .toBe('done');

describe('the create wizard’s SSH key goes through the cloud-init domain', () => {
  it('a VM created with sshKey shows editable settings (REST and PVE keys), and the key is in the image', async () => {
    const made = await rest('POST', '/vms', { name: 'wiz', image: 'debian', cpu: 1, mem: '1G', sshKey: KEY });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const ci = (await rest('GET', '/vms/tailvm/wiz/cloudinit')).body;
    expect(ci).toMatchObject({ handWritten: false, sshKeys: [KEY], user: 'debian', pending: [] });
    expect(ci.drive).toMatchObject({ disk: 'cloudinitdisk', secret: 'wiz-cloudinit', type: 'nocloud' });
    const image = await secretText('wiz');
    expect(image.userdata).toContain(KEY);
    expect(image.userdata).toContain('user: debian');
    const config = (await api.get(`/nodes/corral-1/qemu/${await vmidOf('wiz')}/config`)).body.data as Record<
      string,
      string
    >;
    expect(decodeURIComponent(config.sshkeys ?? '')).toBe(`${KEY}\n`);

    // Editable now (a hand-written drive answers 409): the stopped VM's image follows at once.
    const edit = await rest('PUT', '/vms/tailvm/wiz/cloudinit', { user: 'ops', sshKeys: [KEY, `${KEY}-2`] });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    await waitRest(edit.body.task);
    expect((await secretText('wiz')).userdata).toContain('user: ops');
  });

  it('hand-written user data (cloudInit) is kept as written, with the key merged, as before', async () => {
    const userData = '#cloud-config\nruncmd:\n  - echo hello\n';
    const made = await rest('POST', '/vms', {
      name: 'wiz-raw',
      containerDisk: 'quay.io/containerdisks/fedora:42',
      cloudInit: userData,
      sshKey: KEY,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await rest('GET', '/vms/tailvm/wiz-raw/cloudinit')).body).toMatchObject({ handWritten: true });
    expect((await secretText('wiz-raw')).userdata).toBe(
      `#cloud-config\nruncmd:\n  - echo hello\nssh_authorized_keys:\n  - ${JSON.stringify(KEY)}\n`,
    );
  });
});

describe('a pending cloud-init change survives a Corral restart', () => {
  it('still pending after the restart, and Regenerate image applies it', async () => {
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 760,
      name: 'ci-restart',
      memory: 512,
      ide2: 'local-lvm:cloudinit',
      ciuser: 'deploy',
      ipconfig0: 'ip=dhcp',
      start: 1,
    });
    expect((await waitTask(api, created.body.data as string, 60_000)).exitstatus).toBe('OK');
    await expect.poll(async () => (await kube(vmPath('ci-restart'))).status?.printableStatus).toBe('Running');
    const put = await api.put('/nodes/corral-1/qemu/760/config', { ciuser: 'ops' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const pending = { key: 'ciuser', value: 'deploy', pending: 'ops' };
    expect((await api.get('/nodes/corral-1/qemu/760/cloudinit')).body.data).toContainEqual(pending);

    await h.restartCorral();
    api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const node = ((await rest('GET', '/vms/tailvm/ci-restart/row')).body as { node: string }).node;
    expect((await api.get(`/nodes/${node}/qemu/760/cloudinit`)).body.data).toContainEqual(pending);
    expect(((await rest('GET', '/vms/tailvm/ci-restart/cloudinit')).body.pending as unknown[]).length).toBe(1);
    expect((await secretText('ci-restart')).userdata).toContain('user: deploy');

    const regen = await api.put(`/nodes/${node}/qemu/760/cloudinit`);
    expect(regen.status, JSON.stringify(regen.body)).toBe(200);
    const after = (await api.get(`/nodes/${node}/qemu/760/cloudinit`)).body.data as Record<string, unknown>[];
    expect(after.filter((i) => 'pending' in i || 'delete' in i)).toEqual([]);
    expect(after).toContainEqual({ key: 'ciuser', value: 'ops' });
    expect((await secretText('ci-restart')).userdata).toContain('user: ops');
  }, 90_000);
});

describe('legacy plaintext ci* keys in the Proxmox extras annotation', () => {
  /** A VM as the Proxmox door wrote it before the cloud-init domain: ci* keys verbatim among the options. */
  async function legacyVm(name: string): Promise<number> {
    const made = await rest('POST', '/vms', { name, containerDisk: 'quay.io/containerdisks/fedora:42' });
    expect(made.status).toBe(201);
    const options = {
      ostype: 'l26',
      ciuser: 'legacy',
      cipassword: 'Plain-Secret-1',
      ipconfig0: 'ip=10.1.2.3/24,gw=10.1.2.1',
      nameserver: '10.1.2.1',
    };
    const annotation = JSON.stringify({ options, disks: {}, nets: {} });
    await kube(vmPath(name), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { [EXTRAS]: annotation } } }),
    });
    await expect
      .poll(() => h.corral.cluster.cache.get('VirtualMachine', 'tailvm', name)?.metadata.annotations?.[EXTRAS])
      .toBe(annotation);
    return vmidOf(name);
  }
  const plaintextGone = async (name: string) => {
    const vm = await kube(vmPath(name));
    expect(JSON.stringify(vm)).not.toContain('Plain-Secret-1');
    const extras = JSON.parse(vm.metadata.annotations?.[EXTRAS] ?? '{}') as { options: Record<string, string> };
    expect(extras.options.ostype).toBe('l26');
    expect(Object.keys(extras.options).filter((k) => /^(ci|ipconfig|nameserver)/.test(k))).toEqual([]);
    const secret = await secretText(name);
    expect(secret.password).toMatch(/^\$6\$/);
    expect(JSON.stringify(secret)).not.toContain('Plain-Secret-1');
  };

  it('a config read moves them into the cloud-init settings; the config shows the same keys, password masked', async () => {
    const vmid = await legacyVm('legacy-read');
    const config = (await api.get(`/nodes/corral-1/qemu/${vmid}/config`)).body.data as Record<string, string>;
    expect(config).toMatchObject({
      ostype: 'l26',
      ciuser: 'legacy',
      cipassword: '**********',
      ipconfig0: 'ip=10.1.2.3/24,gw=10.1.2.1',
      nameserver: '10.1.2.1',
    });
    await plaintextGone('legacy-read');
    expect((await rest('GET', '/vms/tailvm/legacy-read/cloudinit')).body).toMatchObject({
      user: 'legacy',
      passwordSet: true,
      nameservers: ['10.1.2.1'],
    });
  });

  it('a config write (bpg’s PUT …/config) moves them too, and keeps what it changes', async () => {
    const vmid = await legacyVm('legacy-write');
    const put = await api.put(`/nodes/corral-1/qemu/${vmid}/config`, { description: 'migrated' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await plaintextGone('legacy-write');
    const config = (await api.get(`/nodes/corral-1/qemu/${vmid}/config`)).body.data as Record<string, string>;
    expect(config).toMatchObject({ description: 'migrated', ciuser: 'legacy', cipassword: '**********' });
  });
});
