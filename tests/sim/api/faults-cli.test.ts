import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultInjector } from '../../../src/sim/faults/index.js';
import { mergedKubeconfig, parseCli, UsageError } from '../../../src/sim/cli.js';
import { expectStatus, raw, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

describe('fault injection', () => {
  it('fails every API request with the chosen status while the control paths keep working', async () => {
    h.cluster.faults.failRequests(1, 503);
    try {
      const failed = await expectStatus(h.core.listNamespace());
      expect(failed).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
      expect((await raw(h, 'GET', '/_sim/faults')).json).toMatchObject({ failFraction: 1, failStatus: 503 });
    } finally {
      h.cluster.faults.clear();
    }
    expect((await h.core.listNamespace()).items.length).toBeGreaterThan(0);
  });

  it('fails only the configured fraction (deterministic random source)', () => {
    const f = new FaultInjector();
    const rolls = [0.1, 0.9, 0.2, 0.8];
    let i = 0;
    f.random = () => rolls[i++ % rolls.length]!;
    f.failRequests(0.5, 500);
    const actions = [0, 1, 2, 3].map(() => f.decide('/api/v1/pods').action);
    expect(actions).toEqual(['fail', 'serve', 'fail', 'serve']);
  });

  it('slows requests down through the HTTP control interface', async () => {
    const set = await raw(h, 'POST', '/_sim/faults', { delayFraction: 1, delayMs: 300 });
    expect(set.status).toBe(200);
    try {
      const started = Date.now();
      await h.core.listNamespace();
      expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    } finally {
      expect((await raw(h, 'DELETE', '/_sim/faults')).json).toMatchObject({ delayFraction: 0 });
    }
  });

  it('rejects invalid fault settings with 400', async () => {
    expect((await raw(h, 'POST', '/_sim/faults', { failFraction: 2 })).status).toBe(400);
    expect((await raw(h, 'POST', '/_sim/faults', { explode: true })).status).toBe(400);
    expect((await raw(h, 'POST', '/_sim/faults', '[1]')).status).toBe(400);
  });

  it('sets and clears the bandwidth of the importers through /_sim/settings; refuses a bad value naming it', async () => {
    expect((await raw(h, 'PATCH', '/_sim/settings', { importMiBps: 4 })).json).toMatchObject({ importMiBps: 4 });
    for (const bad of [0, -1, 'fast', true]) {
      const refused = await raw(h, 'PATCH', '/_sim/settings', { importMiBps: bad });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.json)).toContain('importMiBps');
    }
    // A refused body changes nothing, not even its valid fields.
    expect((await raw(h, 'PATCH', '/_sim/settings', { metricsServer: false, importMiBps: 0 })).status).toBe(400);
    expect((await raw(h, 'GET', '/_sim/settings')).json).toMatchObject({ importMiBps: 4, metricsServer: true });
    expect((await raw(h, 'PATCH', '/_sim/settings', { importMiBps: null })).json).not.toHaveProperty('importMiBps');
  });

  it('hang: requests are accepted and never answered until resumed', async () => {
    await raw(h, 'PATCH', '/_sim/faults', { unresponsive: 'hang' });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 300);
    await expect(fetch(`${h.url}/api/v1/namespaces`, { signal: controller.signal })).rejects.toThrow();
    clearTimeout(timer);
    await raw(h, 'PATCH', '/_sim/faults', { unresponsive: 'no' });
    expect((await raw(h, 'GET', '/api/v1/namespaces')).status).toBe(200);
  });

  it('refuse: connections are reset', async () => {
    h.cluster.faults.stopAnswering('refuse');
    try {
      await expect(fetch(`${h.url}/api/v1/namespaces`)).rejects.toThrow();
    } finally {
      h.cluster.faults.resumeAnswering();
    }
    expect((await raw(h, 'GET', '/api/v1/namespaces')).status).toBe(200);
  });

  it('drops every open watch stream on demand', async () => {
    const res = await fetch(`${h.url}/api/v1/namespaces?watch=true`);
    const reader = res.body!.getReader();
    await reader.read(); // initial ADDED events
    const dropped = await raw(h, 'POST', '/_sim/faults/drop-watches');
    expect(dropped.json.dropped).toBe(1);
    let done = false;
    while (!done) done = (await reader.read()).done;
    expect(done).toBe(true);
  });
});

describe('sim CLI', () => {
  it('parses flags and refuses bad ones with a usage error', () => {
    expect(parseCli(['--port', '0', '--kubeconfig', 'kc', '--fleet', '25', '--speed', '10'])).toMatchObject({
      port: 0,
      fleet: 25,
      speed: 10,
      metricsServer: true,
    });
    expect(() => parseCli(['--kubeconfig', 'kc'])).toThrow(UsageError);
    expect(() => parseCli(['--port', '0', '--kubeconfig', 'kc', '--fleet', 'huge'])).toThrow(/--fleet/);
    expect(() => parseCli(['--port', '0', '--kubeconfig', 'kc', '--bogus'])).toThrow(UsageError);
    expect(parseCli(['--port', '0', '--kubeconfig', 'kc', '--clusters', '3']).clusters).toBe(3);
    expect(() => parseCli(['--port', '0', '--kubeconfig', 'kc', '--clusters', '0'])).toThrow(/--clusters/);
    // --clusters N writes one kubeconfig naming each cluster by its own context.
    const merged = mergedKubeconfig([
      { url: 'http://127.0.0.1:1', name: 'sim1' },
      { url: 'http://127.0.0.1:2', name: 'sim2' },
    ]);
    expect(merged).toContain('current-context: sim1');
    expect(merged.match(/^- name: sim2$/gm)).toHaveLength(2); // the cluster and the context
  });

  it('starts, writes the kubeconfig, prints ready, serves, and exits 0 on SIGTERM; bad flags exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'corral-sim-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/sim/cli.ts', '--port', '0', '--kubeconfig', kubeconfig, '--fleet', 'empty'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 20_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const server = /server: "([^"]+)"/.exec(readFileSync(kubeconfig, 'utf8'))![1]!;
    expect((await fetch(`${server}/version`)).status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    const bad = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/sim/cli.ts', '--port', 'x', '--kubeconfig', kubeconfig],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    bad.stderr.on('data', (d: Buffer) => (err += d.toString()));
    expect(await new Promise((resolve) => bad.on('exit', resolve))).toBe(2);
    expect(err).toContain('--port must be an integer');
  });
});
