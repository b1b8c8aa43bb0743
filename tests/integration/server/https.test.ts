/**
 * `corral web --cert --key`: the one port speaks HTTPS with TLS 1.3 on offer, both through startCorral (what the
 * server does) and through server.ts itself (what the command line does), and /api2/json answers over it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { selfSignedTls } from '@/proxmox/serve';

interface TlsReply {
  status: number;
  protocol: string | null;
  body: string;
}

/** GET over HTTPS pinned to TLS 1.3, skipping verification of the self-signed certificate. */
function getTls13(url: string): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }, (res) => {
      const protocol = (res.socket as TLSSocket).getProtocol();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, protocol, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('startCorral with tls', () => {
  let sim: EmbeddedCluster;
  let corral: RunningCorral;

  beforeAll(async () => {
    sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
    corral = await startCorral({
      kube: { yaml: sim.kubeconfig },
      demo: true,
      port: 0,
      host: '127.0.0.1',
      next: false,
      requestTimeoutMs: 5000,
      tls: await selfSignedTls('localhost'),
    });
    await corral.cluster.cache.waitForSync(20_000);
  }, 60_000);

  afterAll(async () => {
    await corral?.close();
    await sim?.close();
  });

  it('reports an https URL and serves the Proxmox API over TLS 1.3', async () => {
    expect(corral.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await getTls13(`${corral.url}/api2/json/version`);
    expect(r.protocol).toBe('TLSv1.3');
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as { data: { version: unknown } }).data.version).toEqual(expect.any(String));
    const health = await getTls13(`${corral.url}/healthz`);
    expect(health.body).toBe('ok\n');
  });

  it('does not answer plain HTTP on the TLS port', async () => {
    await expect(fetch(corral.url.replace('https:', 'http:') + '/healthz')).rejects.toThrow();
  });
});

describe('server.ts --cert --key', () => {
  let dir: string;
  let child: ChildProcess | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'corral-tls-'));
  });
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'server.ts', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, NODE_ENV: 'development' },
    });
    let out = '';
    proc.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    return { child: proc, output: () => out, exited: new Promise((r) => proc.on('exit', (code) => r(code))) };
  }

  it('refuses --cert without --key', async () => {
    const r = run(['--demo', '--no-ui', '--port', '0', '--cert', join(dir, 'x.pem')]);
    expect(await r.exited).toBe(2);
    expect(r.output()).toContain('--cert and --key go together');
  }, 30_000);

  it('serves https with the given certificate', async () => {
    const tls = await selfSignedTls('localhost');
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    const r = run([
      '--demo',
      '--no-ui',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--cert',
      join(dir, 'cert.pem'),
      '--key',
      join(dir, 'key.pem'),
    ]);
    child = r.child;
    const deadline = Date.now() + 45_000;
    let port: string | undefined;
    while (!port && Date.now() < deadline) {
      port = /listening on https:\/\/localhost:(\d+)/.exec(r.output())?.[1];
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(port, r.output()).toBeDefined();
    const reply = await getTls13(`https://127.0.0.1:${port}/api2/json/version`);
    expect(reply.protocol).toBe('TLSv1.3');
    expect(reply.status).toBe(200);
  }, 60_000);
});
