/**
 * Ansible's community.general Proxmox modules (Debian's `ansible`, installed by .ci/run) through a VM's whole life
 * against Corral over HTTPS with an API token: create with a disk, an ISO and a NIC, an idempotent re-create,
 * start, update, disk resize, a second disk added twice (proxmox_disk present run twice: the second run re-sends
 * the attached disk unchanged), a second NIC, snapshot/rollback/delete, stop, delete — then the same play again,
 * so a VM re-created under a just-deleted name and vmid must work too.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, createNetwork, px, startProxmoxHarness, type ProxmoxHarness } from './harness';

const PLAYBOOK = fileURLToPath(new URL('./ansible_lifecycle.yml', import.meta.url));
const VMID = 760;

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
  await h.corral.cluster.create('PersistentVolumeClaim', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'ubuntu-iso', namespace: 'tailvm' },
    spec: { accessModes: ['ReadOnlyMany'], resources: { requests: { storage: '1Gi' } } },
  });
  await createNetwork(h, 'lan'); // the second NIC's bridge
});
afterAll(async () => {
  await h?.close();
});

interface TaskResult {
  task: { name: string };
  hosts: { localhost: { changed?: boolean; failed?: boolean; msg?: string } & Record<string, unknown> };
}

/** The tasks of the JSON callback's first play; undefined when the output is not its JSON. */
function tasksOf(stdout: string): TaskResult[] | undefined {
  try {
    return (JSON.parse(stdout) as { plays: { tasks: TaskResult[] }[] }).plays[0]?.tasks ?? [];
  } catch {
    return undefined;
  }
}

/** Runs the playbook with the JSON callback; resolves with each task's result on localhost. */
function play(): Promise<TaskResult[]> {
  const vars = {
    api_host: `127.0.0.1:${h.port}`,
    api_token_secret: ADMIN_SECRET,
    vmid: VMID,
    iso: 'local:iso/ubuntu.iso',
  };
  return new Promise((resolve, reject) => {
    execFile(
      'ansible-playbook',
      [PLAYBOOK, '-e', JSON.stringify(vars)],
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
        const tasks = tasksOf(stdout);
        if (!tasks)
          return reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}):\n${stdout}\n${stderr}`));
        const failed = tasks.find((t) => t.hosts.localhost.failed);
        if (failed) return reject(new Error(`task "${failed.task.name}" failed: ${failed.hosts.localhost.msg ?? ''}`));
        if (err) return reject(new Error(`ansible-playbook failed: ${err.message}\n${stderr}`));
        resolve(tasks);
      },
    );
  });
}

describe('Ansible community.general proxmox modules', () => {
  it('run a VM through its whole life, twice in a row', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    for (let round = 1; round <= 2; round++) {
      const tasks = await play();
      const result = (name: string) => {
        const t = tasks.find((x) => x.task.name === name);
        if (!t) throw new Error(`round ${round}: task ${name} did not run`);
        return t.hosts.localhost;
      };
      expect(tasks.map((t) => t.task.name)).toEqual([
        'create',
        'create again',
        'start',
        'current',
        'update',
        'resize',
        'add disk',
        'add disk again',
        'second nic',
        'snapshot',
        'rollback',
        'delete snapshot',
        'stop',
        'delete',
      ]);
      const created = result('create');
      expect(created).toMatchObject({ changed: true, vmid: VMID });
      expect((created.devices as Record<string, string>).scsi0).toMatch(/^local-lvm:/);
      expect((created.mac as Record<string, string>).net0).toMatch(/^BC:24:11(:[0-9A-F]{2}){3}$/);
      expect(result('create again').changed).toBe(false);
      expect(result('current')).toMatchObject({ changed: false, status: 'running' });
      for (const changing of [
        'start',
        'update',
        'resize',
        'add disk',
        'second nic',
        'snapshot',
        'rollback',
        'delete snapshot',
        'delete',
      ])
        expect(result(changing).changed, `${changing} changed`).toBe(true);
      // Gone for Proxmox clients at once (Terraform and Ansible poll for that), before the objects finish going.
      expect((await api.get(`/nodes/corral-1/qemu/${VMID}/status/current`)).status).toBe(404);
    }
  }, 600_000);
});
