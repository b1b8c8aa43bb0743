/**
 * The container image really serves: `scripts/image.sh` (what `npm run image` runs) assembles the root filesystem
 * from the cached Debian base, the pinned Node runtime, the production node_modules and the built UI; the test runs
 * it as the image would run — uid 10001, read-only root, tmpfs /tmp and .next/cache, `tini -- node bin/corral.mjs
 * web` from /app — against the embedded cluster, and waits for /readyz and the UI's first page.
 * podman runs it when it can start containers here; otherwise the root filesystem runs under `unshare` + `chroot`
 * (as root). Skipped, with the reason printed, when neither is possible or the Debian base cannot be built.
 * The UI is built first when .next is missing or older than its sources (build-ui.ts; Playwright's setup then
 * reuses that build), so a clean clone runs this test rather than skipping it.
 * Cold (empty CORRAL_IMAGE_CACHE): ~5.5 min for mmdebstrap's Debian base, which CI prepares in the background
 * (`scripts/image.sh --base-only`) while it installs, type-checks and lints — this run then waits for it through
 * the cache's lock; the production node_modules are derived offline from the checkout's (~20 s). With the base
 * cached: ~1 min (assembling the root filesystem, starting it, /readyz).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../src/sim/index.js';
import { buildUi } from '../../e2e/build-ui';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cache = process.env.CORRAL_IMAGE_CACHE ?? join(homedir(), '.cache', 'corral-image');
const ok = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

function skipReason(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'chroot needs root and podman cannot be assumed';
  if (!ok('unshare', ['--mount', '--pid', '--fork', 'true'])) return 'unshare --mount --pid is not permitted here';
  const cachedBase = existsSync(cache) && spawnSync('sh', ['-c', `ls ${cache}/base-*.tar`]).status === 0;
  if (!cachedBase && !ok('mmdebstrap', ['--version'])) return 'mmdebstrap is not installed (.ci/run installs it)';
  return undefined;
}
const reason = skipReason();
if (reason) console.log(`[image test] skipped: ${reason}`);

let cluster: EmbeddedCluster;
let dir: string;
let fs: string;
let server: ChildProcess | undefined;
let output = '';

function sh(cmd: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}:\n${log}`))));
  });
}

/** podman can run a container here (it cannot under some sandboxes: setrlimit / cgroup errors). */
function podmanRuns(): boolean {
  if (!ok('podman', ['--version'])) return false;
  const r = spawnSync('podman', ['run', '--rm', '--rootfs', fs, '/usr/local/bin/node', '-e', '0'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) console.log(`[image test] podman cannot run containers here, using chroot: ${r.stderr.trim()}`);
  return r.status === 0;
}

async function waitReady(url: string, deadline: number): Promise<Response> {
  for (;;) {
    if (server?.exitCode !== null && server?.exitCode !== undefined)
      throw new Error(`the image's server exited ${server.exitCode}:\n${output}`);
    const res = await fetch(url).catch(() => undefined);
    if (res?.status === 200) return res;
    if (Date.now() > deadline) throw new Error(`${url} not ready (last ${res?.status}):\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(reason !== undefined)('the container image', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'corral-image-'));
    mkdirSync(cache, { recursive: true });
    buildUi(root); // reused when fresh
    // On the cache's file system, so the production node_modules are hard-linked rather than copied.
    fs = join(cache, `test-rootfs-${process.pid}`);
    await sh(join(root, 'scripts', 'image.sh'), ['--rootfs-only', fs], 600_000);
    cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', kubeconfigPath: join(dir, 'kubeconfig') });
    mkdirSync(join(fs, 'kube'));
    copyFileSync(join(dir, 'kubeconfig'), join(fs, 'kube', 'config'));
    chmodSync(join(fs, 'kube', 'config'), 0o644); // read by uid 10001 (a mounted Secret in the cluster)
  }, 900_000);
  afterAll(async () => {
    if (server && server.exitCode === null) {
      if (server.spawnfile === 'unshare') {
        // unshare ignores SIGTERM while it waits, and its child (the PID namespace's init, tini after the execs)
        // changes uid, so no parent-death signal survives: SIGKILL that init, which ends the whole namespace.
        const init = spawnSync('pgrep', ['-P', String(server.pid)], { encoding: 'utf8' }).stdout.trim();
        if (init) process.kill(Number(init), 'SIGKILL');
      } else server.kill('SIGTERM');
      await new Promise((r) => server!.once('exit', r));
    }
    await cluster?.close();
    if (fs) rmSync(fs, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs read-only as uid 10001 and answers /readyz and the UI against the embedded cluster', async () => {
    const port = 20_000 + (process.pid % 20_000);
    const args = ['web', '--port', String(port), '--kubeconfig', '/kube/config'];
    if (podmanRuns()) {
      const podmanArgs = ['run', '--rm', '--network', 'host', '--read-only', '--user', '10001:10001'];
      podmanArgs.push('--tmpfs', '/tmp', '--tmpfs', '/app/.next/cache:uid=10001', '--workdir', '/app');
      podmanArgs.push('-e', 'NODE_ENV=production', '--rootfs', fs, '/usr/bin/tini', '--', '/usr/local/bin/node');
      server = spawn('podman', [...podmanArgs, 'bin/corral.mjs', ...args]);
    } else {
      // A private mount namespace: the root filesystem bind-mounted read-only with tmpfs where the pod has emptyDirs.
      const script = [
        `mount --bind ${fs} ${fs}`,
        `mount -o remount,bind,ro ${fs}`,
        `mount -t tmpfs -o mode=1777 tmpfs ${fs}/tmp`,
        `mount -t tmpfs -o uid=10001 tmpfs ${fs}/app/.next/cache`,
        `mount -t proc proc ${fs}/proc`,
        `exec chroot --userspec=10001:10001 ${fs} /usr/bin/env -i -C /app HOME=/app NODE_ENV=production ` +
          `PATH=/usr/local/bin:/usr/bin:/bin /usr/bin/tini -s -- /usr/local/bin/node bin/corral.mjs ${args.join(' ')}`,
      ].join(' && ');
      // Stopped by SIGKILLing the namespace's init (see afterAll).
      server = spawn('unshare', ['--mount', '--pid', '--fork', 'sh', '-c', script]);
    }
    server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (output += d.toString()));

    const ready = await waitReady(`http://127.0.0.1:${port}/readyz`, Date.now() + 60_000);
    expect(ready.status).toBe(200);
    // Ready means ready: /readyz says 200 only once the UI is attached, so the first page answers at once.
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status, output).toBe(200);
    expect(await page.text()).toContain('<html');
    // qcow2 export's converter is in the image.
    expect(existsSync(join(fs, 'usr', 'bin', 'qemu-img'))).toBe(true);
  }, 90_000);
});
