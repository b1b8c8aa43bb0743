/**
 * proxmoxer 1.2 (Debian's python3-proxmoxer — what Ansible's proxmox modules and most Proxmox scripts use)
 * through a full lifecycle against Corral over HTTPS, with an API token and with a password login. The Python
 * script prints one JSON line per step; this test checks what each step saw.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, startProxmoxHarness, type ProxmoxHarness } from './harness';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./proxmoxer_lifecycle.py', import.meta.url));

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
  await h.corral.cluster.create('PersistentVolumeClaim', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'debian-12-iso', namespace: 'tailvm' },
    spec: { accessModes: ['ReadOnlyMany'], resources: { requests: { storage: '1Gi' } } },
  });
});
afterAll(async () => {
  await h?.close();
});

type Step = { step: string } & Record<string, unknown>;

function run(args: string[]): Promise<Step[]> {
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

function checkLifecycle(steps: Step[], vmid: number, name: string): void {
  const at = (s: string) => {
    const found = steps.find((x) => x.step === s);
    if (!found) throw new Error(`step ${s} missing`);
    return found;
  };
  expect(steps.map((s) => s.step)).toEqual([
    'version',
    'nextid',
    'create',
    'config',
    'start',
    'status',
    'resize',
    'updated',
    'snapshot',
    'snapshots',
    'rollback',
    'delsnapshot',
    'start-again',
    'stop',
    'stopped',
    'tasks',
    'delete',
    'gone',
  ]);
  expect(at('create').upid).toMatch(
    new RegExp(`^UPID:[a-z0-9-]+:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmcreate:${vmid}:`),
  );
  const config = at('config').config as Record<string, unknown>;
  expect(config).toMatchObject({ name, cores: 1, sockets: 1, memory: '512', description: 'made by proxmoxer' });
  expect(config.scsi0).toMatch(/^local-lvm:.*,format=raw,size=1G$/);
  expect(config.ide2).toBe('local:iso/debian-12.iso,media=cdrom,size=1G');
  expect(config.net0).toMatch(/^virtio=BC:24:11(:[0-9A-F]{2}){3},bridge=vmbr0$/);
  expect(at('status').status).toMatchObject({ status: 'running', qmpstatus: 'running', vmid });
  const updated = at('updated').config as Record<string, unknown>;
  expect(updated).toMatchObject({ cores: 2, memory: '1024', description: 'resized by proxmoxer', net0: config.net0 });
  expect(updated.scsi0).toMatch(/size=2G$/);
  expect((at('snapshots').snapshots as { name: string }[]).map((s) => s.name)).toEqual(['hsnap1', 'current']);
  expect(at('stopped').status).toMatchObject({ status: 'stopped' });
  const tasks = at('tasks').tasks as { type: string; status?: string }[];
  expect(tasks.map((t) => t.type)).toEqual(
    expect.arrayContaining(['qmcreate', 'qmstart', 'qmstop', 'qmsnapshot', 'qmrollback', 'qmdelsnapshot']),
  );
  expect(at('gone')).toMatchObject({ status_code: 404 });
  expect(String(at('gone').message)).toMatch(/does not exist/);
}

// Runs unconditionally: .ci/run installs python3-proxmoxer, and a machine without it fails here, naming the script.
describe('proxmoxer', () => {
  it('completes a full lifecycle with an API token', async () => {
    checkLifecycle(await run(['token', 'root@pam', 'ci', ADMIN_SECRET, '301', 'pyx-token']), 301, 'pyx-token');
  });

  it('completes a full lifecycle with a password login (ticket + CSRF)', async () => {
    checkLifecycle(await run(['password', 'root@pam', ADMIN_SECRET, '302', 'pyx-ticket']), 302, 'pyx-ticket');
  });
});
