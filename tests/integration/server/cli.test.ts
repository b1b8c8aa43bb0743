/** `corral web` on the command line: --help, usage errors that exit 2 without a stack trace, and --metrics. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

function corral(...args: string[]) {
  return spawnSync(`${root}node_modules/.bin/node`, ['bin/corral.mjs', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('corral web', () => {
  it('prints its usage for --help and exits 0', () => {
    const r = corral('web', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: corral web');
    expect(r.stdout).toContain('--open');
  });

  it('--help lists every flag server.ts accepts', () => {
    // The flags as parseArgs declares them, read from the source so a new flag without a usage line fails here.
    const source = readFileSync(`${root}server.ts`, 'utf8');
    const block = /options: \{([\s\S]*?)\n {6}\},\n {6}strict: true/.exec(source)?.[1] ?? '';
    const flags = [...block.matchAll(/^ {8}'?([a-z-]+)'?: \{/gm)].map((m) => m[1]);
    expect(flags).toEqual(expect.arrayContaining(['demo', 'metrics', 'metrics-interval', 'no-ui', 'help']));
    const help = corral('web', '--help').stdout;
    for (const flag of flags) expect(help).toMatch(new RegExp(`^\\s+(--[a-z-]+, )?--${flag}\\b`, 'm'));
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--port'], /--port/],
    [['--port', 'eighty'], /--port: not a port number/],
    [['--cert', 'only.pem'], /--cert and --key go together/],
    [['stray'], /positional/i],
    [['--metrics-interval', '5'], /--metrics-interval needs --metrics/],
    [['--metrics', '--metrics-interval', '0'], /--metrics-interval: not a whole number of seconds/],
    [['--metrics', '--metrics-interval', '1.5'], /--metrics-interval: not a whole number of seconds/],
    [['--metrics=yes'], /--metrics/],
    [['--demo-clusters', '0'], /--demo-clusters: not a whole number from 1 to 8/],
    [['--all-contexts', '--context', 'a'], /--all-contexts and --context exclude each other/],
    [['--kubeconfig-dir', '/nonexistent/corral-clusters'], /--kubeconfig-dir \/nonexistent\/corral-clusters: ENOENT/],
  ])('refuses %j with usage and exit 2', (args, message) => {
    const r = corral('web', ...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('usage: corral web');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});

describe('corral (the command itself)', () => {
  it('prints its usage for --help on stdout and exits 0', () => {
    const r = corral('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: corral web');
    expect(r.stdout).toContain('--metrics');
  });

  it.each([[['bogus']], [['proxmox', 'serve', '--bogus']]])(
    'refuses %j with usage, exit 2 and no stack trace',
    (args) => {
      const r = corral(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/usage: corral/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );
});

describe('corral web --metrics', () => {
  it('serves collected Prometheus series at /metrics on the main port', async () => {
    const child = spawn(
      `${root}node_modules/.bin/node`,
      ['bin/corral.mjs', 'web', '--demo', '--no-ui', '--metrics', '--metrics-interval', '1', '--port', '0'],
      { cwd: root, env: { ...process.env, HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const port = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${out}\n${err}`)), 60_000);
        child.stdout.on('data', () => {
          // The startup lines may arrive in separate chunks: wait for the /metrics one, printed last.
          const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
          if (m && out.includes('/metrics')) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        void exited.then((code) => reject(new Error(`corral exited with ${code}:\n${out}\n${err}`)));
      });
      expect(out).toContain('Prometheus series at /metrics, rebuilt every 1 s');
      let text = '';
      // The demo cluster boots at real speed: allow a loaded machine a minute to sync.
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !/^corral_backend_up\{.*\} 1$/m.test(text)) {
        await new Promise((r) => setTimeout(r, 200));
        text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      }
      expect(text).toMatch(/^corral_collection_success 1$/m);
      // --demo serves two embedded clusters, home (the demo fleet) and lab.
      expect(text).toMatch(/^corral_backend_up\{context="home",backend="kubevirt"\} 1$/m);
      expect(text).toMatch(/^corral_backend_up\{context="lab",backend="kubevirt"\} 1$/m);
      expect(text).toMatch(
        /^corral_instance_info\{name="web",backend="kubevirt",context="home",namespace="tailvm",pool="",/m,
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(err).not.toMatch(/\n\s+at /);
  }, 150_000);
});

describe('corral doctor', () => {
  it('checks a cluster through a kubeconfig file: exit 1 while a gate is off, --fix enables it and exits 0', async () => {
    const { startEmbeddedCluster } = await import('@/sim/index');
    const dir = mkdtempSync(join(tmpdir(), 'corral-doctor-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const sim = await startEmbeddedCluster({
      port: 0,
      fleet: 'empty',
      speed: 50,
      kubeconfigPath: kubeconfig,
      baseline: { featureGates: ['Snapshot', 'HotplugVolumes', 'ExpandDisks', 'LiveMigration'] },
    });
    // spawnSync would block this process, and with it the embedded cluster the child talks to.
    const doctor = (...args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(`${root}node_modules/.bin/node`, ['bin/corral.mjs', 'doctor', ...args], { cwd: root });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.once('exit', (code) => resolve({ code, out, err }));
      });
    try {
      const first = await doctor('--kubeconfig', kubeconfig);
      expect(first.code).toBe(1);
      expect(first.out).toMatch(/✖ fail\s+gate-vmexport\s+the KubeVirt VMExport feature gate is off/);
      expect(first.out).toMatch(/✔ ok\s+rbac/);
      const fixed = await doctor('--kubeconfig', kubeconfig, '--fix');
      expect(fixed.out).toContain('fixed: enabled feature gate VMExport on KubeVirt kubevirt/kubevirt');
      expect(fixed.code).toBe(0);
      expect(first.err + fixed.err).not.toMatch(/\n\s+at /);
    } finally {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
