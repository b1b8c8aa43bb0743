/**
 * A cluster without CDI: DataVolumes are not served (404). Corral must still become ready (an absent kind is empty,
 * not an outage) and keep answering. A small proxy in front of the embedded cluster hides the CDI group.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigYaml, startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { eventually } from './harness';

let sim: EmbeddedCluster;
let proxy: Server;
let corral: RunningCorral;

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
  const upstream = new URL(sim.url);
  proxy = createServer((req, res) => {
    if ((req.url ?? '').startsWith('/apis/cdi.kubevirt.io/')) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'the server could not find the requested resource',
          reason: 'NotFound',
          code: 404,
        }),
      );
      return;
    }
    const up = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  corral = await startCorral({
    kube: { yaml: kubeconfigYaml(url) },
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
  });
});

afterAll(async () => {
  await corral?.close();
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await sim?.close();
});

describe('a cluster without CDI', () => {
  it('becomes ready and serves VMs; a source needing CDI fails with a clear error', async () => {
    await eventually(async () => (await fetch(`${corral.url}/readyz`)).status === 200, 15_000, 'ready without CDI');
    expect((await fetch(`${corral.url}/api/vms`)).status).toBe(200);
    const r = await fetch(`${corral.url}/api/vms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'needs-cdi', import: 'https://example.com/a.qcow2' }),
    });
    expect(r.status).toBe(501);
    expect(await r.json()).toEqual({
      error: expect.stringMatching(
        /creating VM tailvm\/needs-cdi failed: this cluster does not serve DataVolumes: install CDI/,
      ),
    });
  });
});
