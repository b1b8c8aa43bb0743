/**
 * `npm run bench:proxmox` — the Proxmox API at 10,000 VMs.
 *
 * The embedded apiserver runs in this process without controllers (a pure apiserver holding 10,000 VMs, half of
 * them running with a VMI on one of three nodes); Corral runs in-process too, with the Proxmox handler mounted at
 * /api2/json on its own HTTP server. Prints GET /cluster/resources p50 and its ratio to Corral's own
 * GET /api/vms p50 (same server, same run, requests interleaved; aim ≤ 1.5×), and status/current p50 for one VM
 * (aim ≤ 2 ms). Times are request → full body received, over loopback HTTP.
 */
import { startEmbeddedCluster } from '../src/sim/index';
import { percentile, seedBenchFleet } from './lib/fleet';
import { startCorral } from '../src/server/start';
import { createProxmoxHandler } from '../src/proxmox/handler';
import { parseGrants } from '../src/proxmox/auth/tokens';

const N = Number(process.env.BENCH_VMS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const SECRET = '11111111-2222-4333-8444-555555555555';

async function timeGet(url: string, headers: Record<string, string> = {}): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  const body = await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
  return ms;
}

async function main(): Promise<void> {
  const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [] });
  seedBenchFleet(sim.store, N);
  const corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: 30_000,
  });
  await corral.cluster.cache.waitForSync(120_000);
  const proxmox = createProxmoxHandler({
    services: corral.services,
    grants: parseGrants(`root@pam!bench=${SECRET}`),
    log: () => {},
  });
  corral.http.mountProxmox((req, res) => proxmox.handle(req, res));
  const auth = { authorization: `PVEAPIToken=root@pam!bench=${SECRET}` };
  const api = `${corral.url}/api/vms`;
  const resources = `${corral.url}/api2/json/cluster/resources?type=vm`;
  const status = `${corral.url}/api2/json/nodes/corral-1/qemu/${1000 + N / 2}/status/current`;

  // Warm up both paths (row caches, JIT), and check both list every VM.
  const apiRows = (await (await fetch(api)).json()) as unknown[];
  const pveRows = ((await (await fetch(resources, { headers: auth })).json()) as { data: unknown[] }).data;
  if (apiRows.length !== N || pveRows.length !== N)
    throw new Error(`expected ${N} rows, got /api/vms ${apiRows.length}, /cluster/resources ${pveRows.length}`);
  for (let i = 0; i < 5; i++) {
    await timeGet(api);
    await timeGet(resources, auth);
    await timeGet(status, auth);
  }

  const a: number[] = [];
  const r: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    a.push(await timeGet(api));
    r.push(await timeGet(resources, auth));
    for (let j = 0; j < 5; j++) s.push(await timeGet(status, auth));
  }
  for (const list of [a, r, s]) list.sort((x, y) => x - y);
  const apiP50 = percentile(a, 50);
  const resP50 = percentile(r, 50);
  const statusP50 = percentile(s, 50);
  console.log(`VMs: ${N}, rounds: ${ROUNDS}`);
  console.log(`GET /api/vms                       p50 ${apiP50.toFixed(2)} ms  p99 ${percentile(a, 99).toFixed(2)} ms`);
  console.log(`GET /api2/json/cluster/resources   p50 ${resP50.toFixed(2)} ms  p99 ${percentile(r, 99).toFixed(2)} ms`);
  console.log(`  ratio to /api/vms (p50)          ${(resP50 / apiP50).toFixed(2)}x  (aim <= 1.5x)`);
  console.log(
    `GET …/qemu/{vmid}/status/current   p50 ${statusP50.toFixed(2)} ms  p99 ${percentile(s, 99).toFixed(2)} ms  (aim <= 2 ms)`,
  );
  proxmox.close();
  await corral.close();
  await sim.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
