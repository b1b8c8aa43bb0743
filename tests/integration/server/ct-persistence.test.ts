/**
 * The CT persistence rule (ADR-0005) played through pods/exec on the embedded cluster, with CTs made and stopped
 * through /api: in a privileged CT a file written anywhere in its (chrooted) root survives Stop/Start; in an
 * unprivileged CT only what is under /data survives, the rest of the root is the pod's own and goes with it.
 */
import { PassThrough } from 'node:stream';
import { Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctShellCommand } from '@/server/domain/ct-spec';
import { eventually, startHarness, type Harness } from './harness';

const NS = 'tailvm';
let h: Harness;
let exec: Exec;

beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  const kc = new KubeConfig();
  kc.loadFromString(h.sim.kubeconfig);
  exec = new Exec(kc);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** Runs `script` in the CT's shell (inside the persistent root for a privileged CT), as the console does. */
function run(ct: string, privileged: boolean, script: string): Promise<{ out: string; status: V1Status }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (out += c.toString()));
  const command = [...ctShellCommand({ privileged }), '-c', script];
  return new Promise((resolve, reject) => {
    exec
      .exec(NS, ct, 'main', command, stdout, stderr, null, false, (status) =>
        setImmediate(() => resolve({ out, status })),
      )
      .catch(reject);
  });
}

const taskDone = (id: string) =>
  eventually(
    async () => {
      const t = (await h.get(`/api/tasks/${id}`)).body as { status: string; error: string };
      if (t.status === 'error') throw new Error(t.error);
      return t.status === 'done';
    },
    30_000,
    `task ${id}`,
  );

async function create(name: string, privileged: boolean) {
  const r = await h.post('/api/cts', { name, image: 'debian:bookworm', privileged });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await taskDone((r.body as { task: string }).task);
}
async function cycle(name: string) {
  for (const action of ['stop', 'start']) {
    const r = await h.post(`/api/cts/${NS}/${name}/${action}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await taskDone((r.body as { task: string }).task);
  }
}

describe('CT files across Stop/Start', () => {
  it('privileged: the whole root lives on the volume', async () => {
    await create('priv', true);
    const first = await run('priv', true, 'echo hello > /root/note; mkdir -p /opt/tool; echo v1 > /opt/tool/conf');
    expect(first.status.status).toBe('Success');
    expect((await run('priv', true, 'cat /etc/os-release')).out).toContain('Debian');
    await cycle('priv');
    const after = await run('priv', true, 'cat /root/note /opt/tool/conf; ls /opt');
    expect(after.out).toBe('hello\nv1\ntool\n');
    // Outside the chroot the pod's own root does not have it (it is a new pod).
    const outside = await run('priv', false, 'cat /root/note');
    expect(outside.out).toBe('cat: /root/note: No such file or directory\n');
    // ... but the volume does, under the seeded root.
    expect((await run('priv', false, 'cat /data/rootfs/root/note')).out).toBe('hello\n');
  });

  it('unprivileged: /data survives, the rest of the root does not', async () => {
    await create('plain', false);
    await run('plain', false, 'echo kept > /data/keep; echo lost > /root/lost');
    expect((await run('plain', false, 'cat /root/lost /data/keep')).out).toBe('lost\nkept\n');
    await cycle('plain');
    const after = await run('plain', false, 'cat /data/keep; cat /root/lost');
    expect(after.out).toBe('kept\ncat: /root/lost: No such file or directory\n');
    // An unprivileged CT has no seeded root to enter.
    const chroot = await run('plain', true, 'true');
    expect(chroot.out).toBe("chroot: cannot change root directory to '/data/rootfs': No such file or directory\n");
  });

  it('a deleted and re-created CT starts from an empty volume', async () => {
    const del = await h.del(`/api/cts/${NS}/plain`);
    expect(del.status).toBe(200);
    await eventually(async () => (await h.get(`/api/cts/${NS}/plain`)).status === 404, 10_000, 'gone');
    await create('plain', false);
    expect((await run('plain', false, 'cat /data/keep')).out).toBe('cat: /data/keep: No such file or directory\n');
  });
});
