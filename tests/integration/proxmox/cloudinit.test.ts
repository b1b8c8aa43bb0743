/**
 * Cloud-init through the Proxmox door, replaying what Terraform's bpg provider sends (`ide2=local-lvm:cloudinit`,
 * `ciuser`, `cipassword`, URL-encoded `sshkeys`, `ipconfig0`, `nameserver`, `searchdomain` on create, then
 * `PUT …/config` + `PUT …/cloudinit` on a change): the VM boots in the embedded cluster with that user, password,
 * key and static address — logged in on the serial console, the address in the guest agent's interfaces — and the
 * password is in no answer, no VM object and no log line.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamSocket, wsUrl } from '../../sim/consoles/harness';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

const PASSWORD = 'Correct-Horse-42';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBd7m1s0yq3Qw0cXkqf5JtY0m2QmYq1m0Xz8Y2y3fW4u deploy@laptop';
const FEDORA =
  'https://download.fedoraproject.org/pub/fedora/linux/releases/42/Cloud/x86_64/images/Fedora-Cloud-Base-Generic-42-1.1.x86_64.qcow2';
const VMID = 720;
const PLAYBOOK = fileURLToPath(new URL('./ansible_cloudinit.yml', import.meta.url));
const PROXMOXER = fileURLToPath(new URL('./proxmoxer_cloudinit.py', import.meta.url));
const NODE = 'corral-1';
const VM = `/nodes/${NODE}/qemu/${VMID}`;

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function until(probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function kube(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.sim.url}${path}`);
  return (await res.json()) as Record<string, unknown>;
}

const secretText = async (): Promise<Record<string, string>> => {
  const s = await kube('/api/v1/namespaces/tailvm/secrets/ci-web-cloudinit');
  return Object.fromEntries(
    Object.entries(s.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
};

describe('cloud-init on the Proxmox API (bpg/proxmox request shapes)', () => {
  it('creates a VM with a cloud-init drive and keys; config echoes them with the password masked', async () => {
    // bpg's vmCreateCustom body (form, keys sorted), trimmed to what matters here.
    const created = await api.post('/nodes/corral-1/qemu', {
      agent: 'enabled=1,fstrim_cloned_disks=0,type=virtio',
      cipassword: PASSWORD,
      ciuser: 'deploy',
      cores: 1,
      ide2: 'file=local-lvm:cloudinit,media=cdrom',
      ipconfig0: 'ip=10.20.0.15/24,gw=10.20.0.1',
      memory: 512,
      name: 'ci-web',
      nameserver: '1.1.1.1 9.9.9.9',
      net0: 'model=virtio,bridge=vmbr0,firewall=0',
      scsi0: `local-lvm:8,import-from=${FEDORA}`,
      searchdomain: 'example.internal',
      sshkeys: encodeURIComponent(`${KEY}\n`),
      vmid: VMID,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');

    const config = (await api.get(`${VM}/config`)).body.data as Record<string, string>;
    expect(config.ide2).toBe(`local-lvm:vm-${VMID}-cloudinit,media=cdrom`);
    expect(config.ciuser).toBe('deploy');
    expect(config.cipassword).toBe('**********');
    expect(decodeURIComponent(config.sshkeys!)).toBe(`${KEY}\n`);
    expect(config.ipconfig0).toBe('ip=10.20.0.15/24,gw=10.20.0.1');
    expect(config.nameserver).toBe('1.1.1.1 9.9.9.9');
    expect(config.searchdomain).toBe('example.internal');
  });

  it('dumps the user-data and network-config PVE generates, the same text the Secret hands the VM', async () => {
    const user = (await api.get(`${VM}/cloudinit/dump`, { type: 'user' })).body.data as string;
    const hash = /^password: (\$6\$[^\n]+)$/m.exec(user)?.[1];
    expect(hash).toMatch(/^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
    expect(user).toBe(
      [
        '#cloud-config',
        'hostname: ci-web',
        'manage_etc_hosts: true',
        'fqdn: ci-web.example.internal',
        'user: deploy',
        `password: ${hash}`,
        'ssh_authorized_keys:',
        `  - ${KEY}`,
        'chpasswd:',
        '  expire: False',
        'users:',
        '  - default',
        'package_upgrade: true',
        '',
      ].join('\n'),
    );
    const network = (await api.get(`${VM}/cloudinit/dump`, { type: 'network' })).body.data as string;
    const mac = ((await api.get(`${VM}/config`)).body.data as Record<string, string>).net0!.match(
      /virtio=([0-9A-F:]+)/,
    )![1]!;
    expect(network).toBe(
      [
        'version: 1',
        'config:',
        '    - type: physical',
        '      name: eth0',
        `      mac_address: '${mac.toLowerCase()}'`,
        '      subnets:',
        '      - type: static',
        "        address: '10.20.0.15'",
        "        netmask: '255.255.255.0'",
        "        gateway: '10.20.0.1'",
        '    - type: nameserver',
        '      address:',
        "      - '1.1.1.1'",
        "      - '9.9.9.9'",
        '      search:',
        "      - 'example.internal'",
        '',
      ].join('\n'),
    );
    const meta = (await api.get(`${VM}/cloudinit/dump`, { type: 'meta' })).body.data as string;
    expect(meta).toMatch(/^instance-id: [0-9a-f]{40}\nlocal-hostname: ci-web\n$/);

    // A Viewer (VM.Audit) reads the dump with the hash masked.
    const viewer = px(h.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` });
    expect((await viewer.get(`${VM}/cloudinit/dump`, { type: 'user' })).body.data).toBe(
      user.replace(hash!, '**********'),
    );

    const secret = await secretText();
    expect(secret.userdata).toBe(user);
    expect(secret.networkdata).toBe(network);
    expect(secret.password).toBe(hash);
    // The VM's volume takes user-data and network-data from that Secret.
    const vm = await kube('/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/ci-web');
    const volumes = (vm.spec as { template: { spec: { volumes: Record<string, unknown>[] } } }).template.spec.volumes;
    expect(volumes.find((v) => v.name === 'ide2')).toEqual({
      name: 'ide2',
      cloudInitNoCloud: { secretRef: { name: 'ci-web-cloudinit' }, networkDataSecretRef: { name: 'ci-web-cloudinit' } },
    });
  });

  it('refuses bad values with PVE 400s naming the parameter, before anything changes', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ipconfig0: 'ip=10.20.0.300/24' }, 'ipconfig0'],
      [{ ipconfig0: 'ip=dhcp,gw=10.0.0.1' }, 'ipconfig0'],
      [{ ipconfig1: 'address=10.0.0.1' }, 'ipconfig1'],
      [{ nameserver: 'not-an-ip' }, 'nameserver'],
      [{ ciuser: 'Bad User' }, 'ciuser'],
      [{ sshkeys: encodeURIComponent('not a key') }, 'sshkeys'],
      [{ citype: 'cloudstack' }, 'citype'],
      [{ cicustom: 'user=local:snippets/missing.yaml' }, 'cicustom'],
      [{ cicustom: 'meta=local:snippets/meta.yaml' }, 'cicustom'],
      [{ ide0: 'local-lvm:cloudinit' }, 'ide0'],
    ];
    for (const [params, field] of cases) {
      const r = await api.put(`${VM}/config`, params);
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.reason).toBe('Parameter verification failed.');
      expect(Object.keys(r.body.errors ?? {}), JSON.stringify(r.body)).toEqual([field]);
    }
    expect(((await api.get(`${VM}/config`)).body.data as Record<string, string>).ciuser).toBe('deploy');
  });

  it('boots with that user, password, key and static address: serial console login and agent interfaces', async () => {
    const start = await api.post(`${VM}/status/start`);
    expect((await waitTask(api, start.body.data as string)).exitstatus).toBe('OK');
    await until(
      async () => ((await api.get(`${VM}/status/current`)).body.data as { status: string }).status === 'running',
    );
    // The guest agent reports the address cloud-init configured on eth0.
    await until(async () => (await api.get(`${VM}/agent/network-get-interfaces`)).status === 200);
    const ifaces = (
      (await api.get(`${VM}/agent/network-get-interfaces`)).body.data as {
        result: { name: string; 'ip-addresses': { 'ip-address': string }[] }[];
      }
    ).result;
    expect(ifaces.find((i) => i.name === 'eth0')?.['ip-addresses'].map((a) => a['ip-address'])).toContain('10.20.0.15');

    const tty = await StreamSocket.open(
      wsUrl(h.sim, '/apis/subresources.kubevirt.io/v1/namespaces/tailvm/virtualmachineinstances/ci-web/console'),
    );
    const prompt = /\[deploy@ci-web [^\]]*\]\$ $/;
    tty.send('\r');
    await tty.readUntil('ci-web login: ', 30_000);
    // A wrong password is refused, as is root (cloud-init set a password for deploy only).
    tty.send('deploy\r');
    await tty.readUntil('Password: ');
    tty.send('wrong\r');
    await tty.readUntil('Login incorrect\r\nci-web login: ');
    tty.send('root\r');
    await tty.readUntil('Password: ');
    tty.send(`${PASSWORD}\r`);
    await tty.readUntil('Login incorrect\r\nci-web login: ');
    tty.send('deploy\r');
    await tty.readUntil('Password: ');
    tty.send(`${PASSWORD}\r`);
    await tty.readUntil(prompt);
    tty.send('cat ~/.ssh/authorized_keys\r');
    expect(await tty.readUntil(prompt)).toContain(`${KEY}\r\n`);
    tty.send('ip -br a\r');
    expect(await tty.readUntil(prompt)).toMatch(/eth0 +UP +10\.20\.0\.15\//);
    tty.close();
  }, 90_000);

  it('a change on the running VM is pending until the image is regenerated (at the next start through the API)', async () => {
    const r = await api.put(`${VM}/config`, { ciuser: 'ops', ipconfig0: 'ip=dhcp', delete: 'searchdomain' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const items = (await api.get(`${VM}/cloudinit`)).body.data as Record<string, unknown>[];
    expect(items).toContainEqual({ key: 'ciuser', value: 'deploy', pending: 'ops' });
    expect(items).toContainEqual({ key: 'ipconfig0', value: 'ip=10.20.0.15/24,gw=10.20.0.1', pending: 'ip=dhcp' });
    expect(items).toContainEqual({ key: 'searchdomain', value: 'example.internal', delete: 1 });
    expect(items).toContainEqual({ key: 'cipassword', value: '**********' });
    expect((await secretText()).userdata).toContain('user: deploy\n');

    // A reboot through the API is a stop and a start: PVE generates the image at start, so the change goes in.
    const reboot = await api.post(`${VM}/status/reboot`);
    expect((await waitTask(api, reboot.body.data as string)).exitstatus).toBe('OK');
    const after = (await api.get(`${VM}/cloudinit`)).body.data as Record<string, unknown>[];
    expect(after.filter((i) => 'pending' in i || 'delete' in i)).toEqual([]);
    expect(after).toContainEqual({ key: 'ciuser', value: 'ops' });
    const secret = await secretText();
    expect(secret.userdata).toContain('user: ops\n');
    expect(secret.networkdata).toContain('- type: dhcp4\n');
    expect(secret.userdata).toBe((await api.get(`${VM}/cloudinit/dump`, { type: 'user' })).body.data);
  });

  it('never shows the password: not in config, pending, the VM, the VMI, the Secret or a log line', async () => {
    const texts = [
      JSON.stringify((await api.get(`${VM}/config`)).body),
      JSON.stringify((await api.get(`${VM}/pending`)).body),
      JSON.stringify((await api.get(`${VM}/cloudinit`)).body),
      JSON.stringify(await kube('/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/ci-web')),
      JSON.stringify(await kube('/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachineinstances/ci-web')),
      JSON.stringify(await secretText()),
      JSON.stringify(await kube('/api/v1/namespaces/tailvm/secrets/ci-web-cloudinit')),
      h.logs.join('\n'),
      JSON.stringify(h.corral.services.journal.list()),
    ];
    for (const t of texts) {
      expect(t).not.toContain(PASSWORD);
      expect(t).not.toContain(Buffer.from(PASSWORD).toString('base64'));
    }
  });

  it('lists snippets on local (content=snippets) and uses one as cicustom user-data; delete=ide2 removes the drive', async () => {
    await h.corral.cluster.create('ConfigMap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'corral-snippets', namespace: 'tailvm' },
      data: { 'web.yaml': '#cloud-config\nruncmd:\n  - echo hello\n' },
    });
    const listed = (await api.get(`/nodes/${NODE}/storage/local/content`, { content: 'snippets' })).body.data;
    expect(listed).toEqual([
      expect.objectContaining({ volid: 'local:snippets/web.yaml', content: 'snippets', format: 'snippet', size: 37 }),
    ]);
    expect((await api.put(`${VM}/config`, { cicustom: 'user=local:snippets/web.yaml' })).status).toBe(200);
    expect((await api.put(`${VM}/cloudinit`)).status).toBe(200);
    expect((await secretText()).userdata).toBe('#cloud-config\nruncmd:\n  - echo hello\n');

    expect((await api.put(`${VM}/config`, { delete: 'ide2' })).status).toBe(200);
    const config = (await api.get(`${VM}/config`)).body.data as Record<string, string>;
    expect(config.ide2).toBeUndefined();
    expect(config.ciuser).toBe('ops'); // PVE keeps the keys when the drive goes
    const vm = await kube('/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/ci-web');
    expect(JSON.stringify(vm.spec)).not.toContain('cloudInit');
    expect((await api.get(`${VM}/cloudinit/dump`, { type: 'user' })).body.data).toContain('echo hello');
  });
});

describe('cloud-init on REST (/api/vms/{ns}/{name}/cloudinit), the same settings the Proxmox keys show', () => {
  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${h.corral.url}/api${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('adds a drive with settings to a stopped VM (image made at once) and reads them back without the password', async () => {
    const made = await rest('POST', '/vms', {
      name: 'ci-rest',
      cpu: 1,
      mem: '1G',
      containerDisk: 'quay.io/containerdisks/fedora:42',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const set = await rest('PUT', '/vms/tailvm/ci-rest/cloudinit', {
      drive: 'add',
      user: 'ops',
      password: PASSWORD,
      sshKeys: [KEY],
      ipConfigs: [{ nic: 0, ip: '10.30.0.5/24', gw: '10.30.0.1' }],
      nameservers: ['10.30.0.1'],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const got = (await rest('GET', '/vms/tailvm/ci-rest/cloudinit')).body;
    expect(got).toMatchObject({
      drive: { disk: 'cloudinitdisk', bus: 'sata', type: 'nocloud', secret: 'ci-rest-cloudinit' },
      handWritten: false,
      user: 'ops',
      passwordSet: true,
      sshKeys: [KEY],
      ipConfigs: [{ nic: 0, ip: '10.30.0.5/24', gw: '10.30.0.1' }],
      nameservers: ['10.30.0.1'],
      type: 'nocloud',
      pending: [],
    });
    expect(JSON.stringify(got)).not.toContain(PASSWORD);
    const user = (await rest('GET', '/vms/tailvm/ci-rest/cloudinit/dump?type=user')).body;
    expect(user.text).toContain('user: ops\n');
    expect(user.text).toMatch(/\npassword: \$6\$/);
    // The Proxmox door shows the same settings.
    const row = (await rest('GET', '/vms/tailvm/ci-rest/row')).body as { vmid: number };
    const config = (await api.get(`/nodes/${NODE}/qemu/${row.vmid}/config`)).body.data as Record<string, string>;
    expect(config).toMatchObject({
      ciuser: 'ops',
      cipassword: '**********',
      ipconfig0: 'ip=10.30.0.5/24,gw=10.30.0.1',
    });
  });

  it('refuses bad input with a 400 naming the field, and a regenerate without a drive with a 409', async () => {
    const bad = await rest('PUT', '/vms/tailvm/ci-rest/cloudinit', {
      ipConfigs: [{ nic: 0, ip: 'dhcp', gw: '1.2.3.4' }],
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toContain('ipConfigs (nic 0)');
    const unknown = await rest('PUT', '/vms/tailvm/ci-rest/cloudinit', { colour: 'blue' });
    expect(unknown.status).toBe(400);
    expect(String(unknown.body.error)).toContain('colour');
    const dump = await rest('GET', '/vms/tailvm/ci-rest/cloudinit/dump?type=vendor');
    expect(dump.status).toBe(400);
    expect(String(dump.body.error)).toContain('type');

    expect((await rest('PUT', '/vms/tailvm/ci-rest/cloudinit', { drive: 'remove' })).status).toBe(200);
    const regen = await rest('POST', '/vms/tailvm/ci-rest/cloudinit/regenerate', {});
    expect(regen.status).toBe(409);
    expect(String(regen.body.error)).toContain('no cloud-init drive');
  });
});

describe('cloud-init through Ansible community.general.proxmox_kvm (ciuser, sshkeys, ipconfig)', () => {
  it('creates and updates a VM with cloud-init keys; the config and the generated image follow', async () => {
    const vars = { api_host: `127.0.0.1:${h.port}`, api_token_secret: ADMIN_SECRET, vmid: 740, sshkey: KEY };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        'ansible-playbook',
        [PLAYBOOK, '-e', JSON.stringify(vars)],
        {
          timeout: 180_000,
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_LOCALHOST_WARNING: 'false' },
        },
        (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${out}\n${stderr}`)) : resolve(out)),
      ),
    );
    const tasks = (JSON.parse(stdout) as { plays: { tasks: { hosts: { localhost: { changed?: boolean } } }[] }[] })
      .plays[0]!.tasks;
    expect(tasks.map((t) => t.hosts.localhost.changed)).toEqual([true, true]);
    const config = (await api.get('/nodes/corral-1/qemu/740/config')).body.data as Record<string, string>;
    expect(config).toMatchObject({
      ide2: 'local-lvm:vm-740-cloudinit,media=cdrom',
      ciuser: 'ops',
      cipassword: '**********',
      ipconfig0: 'ip=dhcp',
      nameserver: '10.40.0.1',
      searchdomain: 'lab.internal',
    });
    expect(decodeURIComponent(config.sshkeys!).trim()).toBe(KEY);
    // Stopped, so the update regenerated the image at once.
    const user = (await api.get('/nodes/corral-1/qemu/740/cloudinit/dump', { type: 'user' })).body.data as string;
    expect(user).toContain('user: ops\n');
    expect(user).toContain(`  - ${KEY}\n`);
    expect(user).not.toContain('Ansible-Pass-7');
    const network = (await api.get('/nodes/corral-1/qemu/740/cloudinit/dump', { type: 'network' })).body.data;
    expect(network).toContain('- type: dhcp4\n');
  }, 200_000);
});

describe('cloud-init through proxmoxer 1.2', () => {
  it('creates with ciuser, a quoted key and ipconfig0, changes the address and regenerates', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        '/usr/bin/python3',
        [PROXMOXER, `127.0.0.1:${h.port}`, ADMIN_SECRET, '750', KEY],
        { timeout: 120_000 },
        (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${out}\n${stderr}`)) : resolve(out)),
      ),
    );
    const steps: Record<string, Record<string, unknown>> = Object.fromEntries(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { step: string } & Record<string, unknown>)
        .map((s) => [s.step, s]),
    );
    expect(steps.create).toMatchObject({ exitstatus: 'OK' });
    expect(steps.config!.config as Record<string, string>).toMatchObject({
      ciuser: 'pyuser',
      cipassword: '**********',
      ipconfig0: 'ip=10.50.0.9/24,gw=10.50.0.1',
    });
    expect(steps.cloudinit!.items as unknown[]).toContainEqual({
      key: 'ipconfig0',
      value: 'ip=10.50.0.10/24,gw=10.50.0.1',
    });
    const dump = steps.dump as unknown as { user: string; network: string };
    expect(dump.user).toContain('user: pyuser\n');
    expect(dump.user).toContain(`  - ${KEY}\n`);
    expect(dump.network).toContain("address: '10.50.0.10'");
    expect(stdout).not.toContain('Py-Secret-9');
  }, 150_000);
});
