/**
 * The standalone `corral proxmox serve` samples metrics.k8s.io too: node cpu/memory in /nodes/{node}/status are
 * NodeMetrics readings, not zeros.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';

let sim: EmbeddedCluster;
let child: ChildProcess | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'corral-pxcli-'));
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50, kubeconfigPath: join(dir, 'kubeconfig') });
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('corral proxmox serve', () => {
  it('reports measured node usage', async () => {
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/proxmox/cli.ts',
        'serve',
        '--addr',
        '127.0.0.1:0',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
      ],
      {
        cwd: process.cwd(),
        env: { ...process.env, CORRAL_PROXMOX_TOKEN: '' },
      },
    );
    let out = '';
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    await expect.poll(() => /at (http:\/\/[\d.:]+)\/api2\/json/.exec(out)?.[1], { timeout: 30_000 }).toBeDefined();
    const base = /at (http:\/\/[\d.:]+)\/api2\/json/.exec(out)?.[1] ?? '';
    const status = async () => {
      const res = await fetch(`${base}/api2/json/nodes/corral-1/status`);
      return res.status === 200
        ? ((await res.json()) as { data: { cpu: number; memory: { used: number } } }).data
        : undefined;
    };
    await expect.poll(async () => (await status())?.cpu ?? 0, { timeout: 30_000 }).toBeGreaterThan(0);
    expect((await status())?.memory.used).toBeGreaterThan(2 ** 30); // kubelet & co. alone use over 1.5 GiB
  }, 60_000);
});
