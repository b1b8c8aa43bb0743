/**
 * Containers through the Proxmox API (`/nodes/{node}/lxc/…`) on the embedded cluster: create from a PVE template
 * name, the list, `status/current`, start/stop/reboot as tasks with lxc UPIDs, the config in PVE's keys and changing
 * it (cores/memory through the CT scale, tags/description, named 400s for what a pod cannot change), delete, the
 * `lxc` rows of `/cluster/resources`, a VM's vmid on an lxc path (and the reverse), and one vmid index for both kinds
 * — also for CTs made through `/api/cts`. proxmoxer 1.2 (Debian's python3-proxmoxer) then runs the same flow.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Exec, KubeConfig } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctShellCommand } from '@/server/domain/ct-spec';
import { LABEL_VMID } from '@/server/domain/labels';
import { fallbackVmid } from '@/server/domain/vmids';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness, type PxReply } from './harness';

const TEMPLATE = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst';
type Dict = Record<string, unknown>;

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
let home: string;
beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  home = ((await api.get('/nodes')).body.data as { node: string }[]).map((n) => n.node).sort()[0] ?? '';
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const data = (r: PxReply) => r.body.data as Dict;
async function ok(r: PxReply | Promise<PxReply>): Promise<Dict> {
  const reply = await r;
  expect(reply.status, `${reply.status} ${reply.reason} ${JSON.stringify(reply.body)}`).toBe(200);
  return (await waitTask(api, reply.body.data as string)) as Dict;
}
const restCt = async (name: string) => (await (await fetch(`${h.corral.url}/api/cts/tailvm/${name}`)).json()) as Dict;
const resources = async (type?: string) =>
  (await api.get('/cluster/resources', type ? { type } : {})).body.data as Dict[];
/** Runs a shell command in a CT's container (a privileged CT's shell is inside its persistent root). */
async function shell(ct: string, script: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromString(h.sim.kubeconfig);
  const out = new PassThrough();
  await new Promise<void>((resolve, reject) => {
    new Exec(kc)
      .exec('tailvm', ct, 'main', [...ctShellCommand({ privileged: true }), '-c', script], out, out, null, false, () =>
        setImmediate(resolve),
      )
      .catch(reject);
  });
}

/** The data volume's used bytes as status/current shows them (`disk`) and as the /api/cts row does, after a sample. */
async function usedOnVolume(): Promise<{ disk: number; rest: number }> {
  await h.corral.cluster.metrics.sampleNow();
  const rest = ((await restCt('box')).diskUsage as { usedBytes: number } | null)?.usedBytes ?? -1;
  return { disk: Number((await statusOf(300)).disk), rest };
}

async function statusOf(vmid: number): Promise<Dict> {
  const r = await api.get(`/nodes/${home}/lxc/${vmid}/status/current`);
  expect(r.status, r.reason).toBe(200);
  return data(r);
}

describe('lxc lifecycle', () => {
  it('creates a stopped CT from a PVE template: labelled PVC, the template’s image, a vzcreate task', async () => {
    const r = await api.post(`/nodes/${home}/lxc`, {
      vmid: 300,
      ostemplate: TEMPLATE,
      hostname: 'box',
      cores: 2,
      memory: 1024,
      swap: 0,
      rootfs: 'local-lvm:2',
      unprivileged: 0,
      net0: 'name=eth0,bridge=vmbr0,ip=dhcp',
      tags: 'web;blue',
      description: 'a pet container',
    });
    expect(r.status, r.reason).toBe(200);
    const upid = r.body.data as string;
    expect(upid).toMatch(new RegExp(`^UPID:${home}:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:vzcreate:300:root@pam!ci:$`));
    expect((await waitTask(api, upid)).exitstatus).toBe('OK');

    const pvc = await h.corral.cluster.fetch('PersistentVolumeClaim', 'tailvm', 'box-data');
    expect(pvc?.metadata.labels).toMatchObject({
      [LABEL_VMID]: '300',
      'corral.dev/ct': 'true',
      'corral.dev/tag.web': 'true',
    });
    // The same CT through Corral's own API: PVE's default is privileged, without start=1 it is not started.
    expect(await restCt('box')).toMatchObject({
      image: 'docker.io/library/debian:12',
      cpu: 2,
      mem: '1Gi',
      disk: '2Gi',
      privileged: true,
      phase: 'Stopped',
    });
    expect(await statusOf(300)).toMatchObject({ vmid: 300, name: 'box', type: 'lxc', status: 'stopped', uptime: 0 });
  });

  it('lists it on the home node, in /cluster/resources as type lxc (also under type=vm), not under type=node', async () => {
    const list = (await api.get(`/nodes/${home}/lxc`)).body.data as Dict[];
    expect(list).toEqual([
      expect.objectContaining({
        vmid: 300,
        name: 'box',
        type: 'lxc',
        status: 'stopped',
        cpus: 2,
        maxmem: 1024 ** 3,
        maxdisk: 2 * 1024 ** 3,
        maxswap: 0,
        tags: 'blue;web',
      }),
    ]);
    const row = (await resources()).find((x) => x.id === 'lxc/300');
    expect(row).toMatchObject({ type: 'lxc', vmid: 300, node: home, name: 'box', status: 'stopped', maxcpu: 2 });
    for (const k of ['vmid', 'maxmem', 'mem', 'maxdisk', 'disk', 'uptime', 'maxcpu'])
      expect(Number.isInteger(row?.[k])).toBe(true);
    expect((await resources('vm')).some((x) => x.id === 'lxc/300')).toBe(true);
    expect((await resources('node')).some((x) => x.type === 'lxc')).toBe(false);
    expect((await resources('storage')).some((x) => x.type === 'lxc')).toBe(false);
  });

  it('reads the config in PVE’s keys and types', async () => {
    const cfg = data(await api.get(`/nodes/${home}/lxc/300/config`));
    expect(cfg).toMatchObject({
      hostname: 'box',
      arch: 'amd64',
      cores: 2,
      memory: 1024,
      swap: 0,
      ostype: 'debian',
      unprivileged: 0,
      rootfs: 'local-lvm:box-data,size=2G',
      tags: 'blue;web',
      description: 'a pet container',
    });
    expect(cfg.net0).toMatch(/^name=eth0,bridge=vmbr0,hwaddr=BC:24:11(:[0-9A-F]{2}){3},ip=dhcp,type=veth$/);
    expect(cfg.digest).toMatch(/^[0-9a-f]{40}$/);
    expect(cfg.mp0).toBeUndefined();
  });

  it('starts as a vzstart task; status/current runs on the pod’s node; a second start is PVE’s refusal', async () => {
    const t = await ok(api.post(`/nodes/${home}/lxc/300/status/start`));
    expect(t).toMatchObject({ type: 'vzstart', id: '300', exitstatus: 'OK' });
    const s = await statusOf(300);
    expect(s).toMatchObject({ status: 'running', type: 'lxc', ha: { managed: 0 } });
    const podNode = String((await restCt('box')).node);
    const node = (await resources('vm')).find((x) => x.id === 'lxc/300')?.node;
    expect(podNode.startsWith(String(node))).toBe(true);
    expect(((await api.get(`/nodes/${String(node)}/lxc`)).body.data as Dict[]).map((x) => x.vmid)).toContain(300);
    // `disk` is the data volume's used bytes, the kubelet's reading that the /api/cts row shows too: it grows by the
    // blocks of a file written in the CT (10,001 bytes, three 4 KiB blocks).
    const before = await usedOnVolume();
    await shell('box', `echo ${'x'.repeat(10_000)} > /big`);
    await expect
      .poll(async () => (await usedOnVolume()).disk, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(before.disk + 3 * 4096);
    const after = await usedOnVolume();
    expect(after.disk).toBe(after.rest);
    expect(
      ((await api.get(`/nodes/${String(node)}/lxc`)).body.data as Dict[])
        .concat(await resources('vm'))
        .filter((x) => x.vmid === 300)
        .map((x) => x.disk),
    ).toEqual([after.disk, after.disk]);
    // Its interfaces as PVE reads them inside the container: eth0 has the config's MAC and the pod's address.
    const ifaces = data(await api.get(`/nodes/${home}/lxc/300/interfaces`)) as unknown as Dict[];
    const mac = String(data(await api.get(`/nodes/${home}/lxc/300/config`)).net0).match(/hwaddr=([^,]+)/)?.[1];
    expect(ifaces).toEqual([
      { name: 'lo', hwaddr: '00:00:00:00:00:00', inet: '127.0.0.1/8', inet6: '::1/128' },
      { name: 'eth0', hwaddr: mac?.toLowerCase(), inet: `${String((await restCt('box')).ip)}/32` },
    ]);
    const again = await api.post(`/nodes/${home}/lxc/300/status/start`);
    expect([again.status, again.reason]).toEqual([500, 'CT 300 already running']);
  });

  it('changes cores and memory through the CT scale (a new pod), tags and description; refuses the rest by name', async () => {
    const put = await api.put(`/nodes/${home}/lxc/300/config`, { cores: 3, memory: 2048, tags: 'web', digest: '' });
    expect([put.status, put.body.data]).toEqual([200, null]);
    expect(data(await api.get(`/nodes/${home}/lxc/300/config`))).toMatchObject({ cores: 3, memory: 2048, tags: 'web' });
    expect(await restCt('box')).toMatchObject({ cpu: 3, mem: '2Gi' });
    await expect
      .poll(
        async () => {
          const pod = await h.corral.cluster.fetch('Pod', 'tailvm', 'box');
          const c = (pod?.spec?.containers as { resources: { limits: Dict } }[] | undefined)?.[0];
          return pod?.status?.phase === 'Running' ? c?.resources.limits : undefined;
        },
        { timeout: 20_000 },
      )
      .toEqual({ cpu: '3', memory: '2Gi' });

    // POST is the asynchronous twin: a UPID. Deleting the description removes it.
    const post = await ok(api.post(`/nodes/${home}/lxc/300/config`, { delete: 'description' }));
    expect(post).toMatchObject({ type: 'vzconfig', exitstatus: 'OK' });
    expect(data(await api.get(`/nodes/${home}/lxc/300/config`)).description).toBeUndefined();

    // Re-sending shown values is a no-op; what a pod cannot change is a 400 naming each key; nothing is written.
    const cfg = data(await api.get(`/nodes/${home}/lxc/300/config`));
    const same = await api.put(`/nodes/${home}/lxc/300/config`, {
      hostname: 'box',
      rootfs: String(cfg.rootfs),
      net0: String(cfg.net0),
      arch: 'amd64',
    });
    expect(same.status, same.reason).toBe(200);
    const bad = await api.put(`/nodes/${home}/lxc/300/config`, {
      cores: 1,
      hostname: 'other',
      mp1: 'local-lvm:1,mp=/srv',
      swap: 512,
      rootfs: 'local-lvm:box-data,size=9G',
      colour: 'red',
    });
    expect([bad.status, bad.reason]).toEqual([400, 'Parameter verification failed.']);
    expect(Object.keys(bad.body.errors ?? {}).sort()).toEqual(['colour', 'hostname', 'mp1', 'rootfs', 'swap']);
    expect(bad.body.errors?.colour).toBe(
      'property is not defined in schema and the schema does not allow additional properties',
    );
    expect(bad.body.errors?.mp1).toMatch(/one volume/);
    expect(data(await api.get(`/nodes/${home}/lxc/300/config`))).toMatchObject({ cores: 3 });
    const stale = await api.put(`/nodes/${home}/lxc/300/config`, { cores: 1, digest: '0'.repeat(40) });
    expect([stale.status, stale.reason]).toEqual([
      500,
      'detected modified configuration - file changed by other user? Try again.',
    ]);
  });

  it('answers a VM’s vmid on lxc paths and a CT’s vmid on qemu paths as PVE does; creates cannot take either', async () => {
    expect((await api.post(`/nodes/${home}/qemu`, { vmid: 301, name: 'vm301', memory: 512 })).status).toBe(200);
    await expect.poll(async () => (await api.get(`/nodes/${home}/qemu/301/config`)).status).toBe(200);
    for (const path of ['config', 'status/current']) {
      const r = await api.get(`/nodes/${home}/lxc/301/${path}`);
      expect([r.status, r.reason]).toEqual([404, `Configuration file 'nodes/${home}/lxc/301.conf' does not exist`]);
      const q = await api.get(`/nodes/${home}/qemu/300/${path}`);
      expect([q.status, q.reason]).toEqual([
        404,
        `Configuration file 'nodes/${home}/qemu-server/300.conf' does not exist`,
      ]);
    }
    expect((await api.post(`/nodes/${home}/lxc/301/status/start`)).status).toBe(404);
    expect((await api.del(`/nodes/${home}/qemu/300`)).status).toBe(404);
    const ct = await api.post(`/nodes/${home}/lxc`, { vmid: 301, ostemplate: TEMPLATE, hostname: 'x' });
    expect([ct.status, ct.reason]).toEqual([500, `unable to create CT 301 - VM 301 already exists on node '${home}'`]);
    const vm = await api.post(`/nodes/${home}/qemu`, { vmid: 300, name: 'y' });
    expect([vm.status, vm.reason]).toEqual([500, `unable to create VM 300 - VM 300 already exists on node '${home}'`]);
    const next = await api.get('/cluster/nextid', { vmid: 300 });
    expect(next.body.errors).toEqual({ vmid: 'VM 300 already exists' });
  });

  it('refuses bad creates with named 400s and creates nothing', async () => {
    const cases: [Dict, string][] = [
      [{ ostemplate: 'local:vztmpl/plan9-4-default_1_amd64.tar.zst' }, 'ostemplate'],
      [{ ostemplate: 'http://example.org/x.tar' }, 'ostemplate'],
      [{ hostname: 'Web.example.org' }, 'hostname'],
      [{ memory: 8 }, 'memory'],
      [{ rootfs: 'local-lvm:0' }, 'rootfs'],
      [{ rootfs: 'nosuch:4' }, 'rootfs'],
      [{ net0: 'name=eth0,bridge=lan' }, 'net0'],
      [{ password: 'secret' }, 'password'],
      [{ swap: 512 }, 'swap'],
      [{ ostype: 'alpine' }, 'ostype'],
    ];
    for (const [extra, key] of cases) {
      const r = await api.post(`/nodes/${home}/lxc`, { vmid: 320, ostemplate: TEMPLATE, hostname: 'nope', ...extra });
      expect([r.status, Object.keys(r.body.errors ?? {})], JSON.stringify(extra)).toEqual([400, [key]]);
    }
    expect(await h.corral.cluster.fetch('PersistentVolumeClaim', 'tailvm', 'nope-data')).toBeUndefined();
    expect((await api.get('/cluster/nextid', { vmid: 320 })).body.data).toBe('320');
  });

  it('reboots, stops and shuts down as lxc tasks; stopping a stopped CT and destroying a running one are refused', async () => {
    expect(await ok(api.post(`/nodes/${home}/lxc/300/status/reboot`))).toMatchObject({
      type: 'vzreboot',
      exitstatus: 'OK',
    });
    expect((await statusOf(300)).status).toBe('running');
    const running = await api.del(`/nodes/${home}/lxc/300`);
    expect([running.status, running.reason]).toEqual([500, 'unable to destroy CT 300 - container is running']);
    expect(await ok(api.post(`/nodes/${home}/lxc/300/status/shutdown`, { forceStop: 1, timeout: 30 }))).toMatchObject({
      type: 'vzshutdown',
      exitstatus: 'OK',
    });
    expect((await statusOf(300)).status).toBe('stopped');
    const stopped = await api.post(`/nodes/${home}/lxc/300/status/stop`);
    expect([stopped.status, stopped.reason]).toEqual([500, 'CT 300 not running']);
    const noIfaces = await api.get(`/nodes/${home}/lxc/300/interfaces`);
    expect([noIfaces.status, noIfaces.reason]).toEqual([500, 'CT 300 not running']);
    // The volume survives Stop; Start brings the same CT back.
    expect(await ok(api.post(`/nodes/${home}/lxc/300/status/start`))).toMatchObject({ exitstatus: 'OK' });
    expect(await ok(api.post(`/nodes/${home}/lxc/300/status/stop`))).toMatchObject({
      type: 'vzstop',
      exitstatus: 'OK',
    });
  });

  it('destroys it as a vzdestroy task: gone from every read at once, its vmid free again', async () => {
    const t = await ok(api.del(`/nodes/${home}/lxc/300`, { purge: 1 }));
    expect(t).toMatchObject({ type: 'vzdestroy', id: '300', exitstatus: 'OK' });
    const gone = await api.get(`/nodes/${home}/lxc/300/status/current`);
    expect([gone.status, gone.reason]).toEqual([404, `Configuration file 'nodes/${home}/lxc/300.conf' does not exist`]);
    expect((await api.get(`/nodes/${home}/lxc`)).body.data).toEqual([]);
    expect((await resources('vm')).some((x) => x.type === 'lxc')).toBe(false);
    expect((await api.get('/cluster/nextid', { vmid: 300 })).body.data).toBe('300');
    await expect
      .poll(async () => h.corral.cluster.fetch('PersistentVolumeClaim', 'tailvm', 'box-data'))
      .toBeUndefined();
  });
});

describe('one vmid index for VMs and CTs', () => {
  it('gives a CT made through /api/cts an id no VM has, even when its name’s fallback id is a VM’s', async () => {
    // An unlabelled VM named `twin` holds the crc32 fallback id of `twin`; a CT named `twin` must get another one.
    await h.corral.cluster.create('VirtualMachine', {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'twin', namespace: 'tailvm' },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    });
    await expect.poll(async () => (await resources('vm')).some((x) => x.name === 'twin')).toBe(true);
    const created = await fetch(`${h.corral.url}/api/cts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'twin', image: 'docker.io/library/alpine:3.20' }),
    });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await resources('vm')).filter((x) => x.name === 'twin').length).toBe(2);
    const twins = (await resources('vm')).filter((x) => x.name === 'twin');
    const vm = twins.find((x) => x.type === 'qemu');
    const ct = twins.find((x) => x.type === 'lxc');
    expect(vm?.vmid).toBe(fallbackVmid('twin'));
    expect(ct?.vmid).not.toBe(vm?.vmid);
    // The newcomer's id is persisted as its PVC's label, so it survives a restart.
    await expect
      .poll(
        async () =>
          (await h.corral.cluster.fetch('PersistentVolumeClaim', 'tailvm', 'twin-data'))?.metadata.labels?.[LABEL_VMID],
      )
      .toBe(String(ct?.vmid));
    expect(data(await api.get(`/nodes/${home}/lxc/${String(ct?.vmid)}/config`))).toMatchObject({
      hostname: 'twin',
      ostype: 'alpine',
      unprivileged: 1,
      mp0: 'local-lvm:twin-data,mp=/data,size=8G',
    });
    expect((await api.get(`/nodes/${home}/qemu/${String(ct?.vmid)}/config`)).status).toBe(404);
  });
});

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./proxmoxer_lxc.py', import.meta.url));
type Step = { step: string } & Dict;

function runProxmoxer(args: string[]): Promise<Step[]> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, `127.0.0.1:${h.port}`, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      const steps = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Step);
      if (err) reject(new Error(`proxmoxer script failed after ${steps.map((s) => s.step).join(' → ')}:\n${stderr}`));
      else resolve(steps);
    });
  });
}

describe('proxmoxer 1.2 drives a container', () => {
  it('creates, lists, reads, changes, starts, stops and destroys a CT, with PVE’s JSON types', async () => {
    const steps = await runProxmoxer(['root@pam', 'ci', ADMIN_SECRET, '330', home]);
    const at = (name: string) => {
      const s = steps.find((x) => x.step === name);
      if (!s) throw new Error(`step ${name} missing (${steps.map((x) => x.step).join(', ')})`);
      return s;
    };
    expect(steps.map((s) => s.step)).toEqual([
      'templates',
      'create',
      'list',
      'resources',
      'config',
      'start',
      'current',
      'update',
      'updated',
      'shutdown',
      'stopped',
      'delete',
      'gone',
    ]);
    expect(at('templates').volids).toContain(TEMPLATE);
    expect(at('create').task).toMatchObject({ status: 'stopped', exitstatus: 'OK', type: 'vzcreate' });
    expect(at('list').row).toMatchObject({
      vmid: ['int', 330],
      status: ['str', 'stopped'],
      maxmem: ['int', 512 * 1024 ** 2],
    });
    expect(at('resources').row).toMatchObject({ type: ['str', 'lxc'], vmid: ['int', 330], node: ['str', home] });
    expect(at('config').config).toMatchObject({
      hostname: ['str', 'pyct'],
      cores: ['int', 1],
      memory: ['int', 512],
      unprivileged: ['int', 1],
      mp0: ['str', 'local-lvm:pyct-data,mp=/data,size=1G'],
      ostype: ['str', 'alpine'],
    });
    expect(at('start').task).toMatchObject({ exitstatus: 'OK', type: 'vzstart' });
    expect(at('current').status).toMatchObject({
      status: ['str', 'running'],
      cpus: ['int', 1],
      uptime: ['int', expect.any(Number)],
    });
    expect(at('update').result).toBeNull();
    expect(at('updated').config).toMatchObject({
      cores: ['int', 2],
      memory: ['int', 768],
      description: ['str', 'from proxmoxer'],
    });
    expect(at('shutdown').task).toMatchObject({ exitstatus: 'OK', type: 'vzshutdown' });
    expect(at('stopped').status).toMatchObject({ status: ['str', 'stopped'] });
    expect(at('delete').task).toMatchObject({ exitstatus: 'OK', type: 'vzdestroy' });
    expect(at('gone')).toMatchObject({
      status_code: 404,
      message: `404 Not Found: Configuration file 'nodes/${home}/lxc/330.conf' does not exist`,
    });
  });
});

interface AnsibleResult {
  task: { name: string };
  hosts: { localhost: { changed?: boolean; failed?: boolean; msg?: string } };
}

/** Runs ansible_lxc.yml with the JSON callback; resolves with each task's result on localhost. */
function playLxc(vmid: number): Promise<AnsibleResult[]> {
  const playbook = fileURLToPath(new URL('./ansible_lxc.yml', import.meta.url));
  const vars = { api_host: `127.0.0.1:${h.port}`, api_token_secret: ADMIN_SECRET, vmid, node: home };
  return new Promise((resolve, reject) => {
    execFile(
      'ansible-playbook',
      [playbook, '-e', JSON.stringify(vars)],
      {
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...process.env,
          ANSIBLE_STDOUT_CALLBACK: 'json',
          ANSIBLE_LOCALHOST_WARNING: 'false',
          ANSIBLE_NOCOLOR: '1',
        },
      },
      (err, stdout, stderr) => {
        let tasks: AnsibleResult[];
        try {
          tasks = (JSON.parse(stdout) as { plays: { tasks: AnsibleResult[] }[] }).plays[0]?.tasks ?? [];
        } catch {
          return reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}):\n${stdout}\n${stderr}`));
        }
        const failed = tasks.find((t) => t.hosts.localhost.failed);
        if (failed) return reject(new Error(`task "${failed.task.name}" failed: ${failed.hosts.localhost.msg ?? ''}`));
        if (err) return reject(new Error(`ansible-playbook failed: ${err.message}\n${stderr}`));
        resolve(tasks);
      },
    );
  });
}

describe('Ansible community.general.proxmox (lxc)', () => {
  it('creates (idempotently), starts, restarts, stops and deletes a container', async () => {
    const tasks = await playLxc(340);
    const result = (name: string) => tasks.find((t) => t.task.name === name)?.hosts.localhost;
    expect(tasks.map((t) => t.task.name)).toEqual([
      'create',
      'create again',
      'start',
      'start again',
      'restart',
      'stop',
      'delete',
    ]);
    for (const changing of ['create', 'start', 'restart', 'stop', 'delete'])
      expect(result(changing)?.changed, `${changing} changed`).toBe(true);
    expect(result('create again')).toMatchObject({ changed: false, msg: 'VM with vmid = 340 is already exists' });
    expect(result('start again')).toMatchObject({ changed: false, msg: 'VM 340 is already running' });
    // The play's CT was the one Corral would make from that template, and it is gone for Proxmox clients at once.
    const gone = await api.get(`/nodes/${home}/lxc/340/status/current`);
    expect([gone.status, gone.reason]).toEqual([404, `Configuration file 'nodes/${home}/lxc/340.conf' does not exist`]);
    const created = h.corral.services.journal
      .list(500)
      .find((t) => t.action === 'ct-create' && t.target === 'tailvm/ansible-ct');
    expect(created?.status).toBe('done');
  }, 300_000);
});

describe('Ansible inventory plugin (community.general.proxmox, want_facts)', () => {
  it('lists a container with its status, config and snapshots facts, in the lxc and running groups', async () => {
    await ok(
      api.post(`/nodes/${home}/lxc`, {
        vmid: 350,
        hostname: 'invct',
        ostemplate: TEMPLATE,
        cores: 2,
        tags: 'inv',
        start: 1,
      }),
    );
    const dir = await mkdtemp(join(tmpdir(), 'corral-inventory-'));
    try {
      const file = join(dir, 'corral.proxmox.yml');
      await writeFile(
        file,
        [
          'plugin: community.general.proxmox',
          `url: https://127.0.0.1:${h.port}`,
          'user: root@pam',
          'token_id: ci',
          `token_secret: ${ADMIN_SECRET}`,
          'validate_certs: false',
          'want_facts: true',
          '',
        ].join('\n'),
      );
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(
          'ansible-inventory',
          ['-i', file, '--list'],
          {
            timeout: 120_000,
            maxBuffer: 16 * 1024 * 1024,
            // requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE override the plugin's `verify = False` (a known
            // requests quirk), and the harness's certificate is self-signed: those variables must not be set.
            // (Node leaves out variables whose value is undefined.)
            env: {
              ...process.env,
              REQUESTS_CA_BUNDLE: undefined,
              CURL_CA_BUNDLE: undefined,
              ANSIBLE_INVENTORY_ENABLED: 'community.general.proxmox',
              ANSIBLE_NOCOLOR: '1',
            },
          },
          (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out)),
        ),
      );
      const inventory = JSON.parse(stdout) as {
        _meta: { hostvars: Record<string, Dict> };
      } & Record<string, { hosts?: string[] }>;
      expect(inventory._meta.hostvars.invct).toMatchObject({
        proxmox_vmid: 350,
        proxmox_vmtype: 'lxc',
        proxmox_status: 'running',
        proxmox_snapshots: [],
        proxmox_cores: 2,
        proxmox_hostname: 'invct',
        proxmox_tags_parsed: ['inv'],
        proxmox_ostype: 'debian',
      });
      expect(inventory.proxmox_all_lxc?.hosts).toContain('invct');
      expect(inventory.proxmox_all_running?.hosts).toContain('invct');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
