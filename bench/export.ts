/**
 * `npm run bench:export` — GET /api/vms/{ns}/{name}/export of a 1 GiB disk.
 *
 * The embedded cluster runs in this process (its export server streams a 1 GiB raw image: the 4 MiB disk image
 * followed by partly compressible filler, `sim.corral.dev/export-bytes`); Corral runs as its own process
 * (`server.ts --no-ui`) so its RSS is measured alone. It prints the export's throughput (raw bytes per second,
 * request → last byte) against `gzip -c` of the very same bytes in the same run (aim ≥ 0.7×; gzip runs once
 * before and once after the export, and the ratio uses their mean so a load drifting during the run biases neither
 * side), and Corral's RSS while exporting over its idle RSS just before, after one small warm-up export (aim +≤ 64
 * MB).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startEmbeddedCluster } from '../src/sim/index';
import { largeRawImageStream } from '../src/sim/storage/disk-image';
import { resourceKey } from '../src/sim/store/types';
import { rssMb, startCorralProcess } from './lib/corral-process';

const BYTES = 1024 ** 3;
const NS = 'tailvm';
const VM = 'bigdisk';
const CLAIM = `${VM}-disk`;
const CONTENT = 'bench:export';

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function waitFor(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(probe()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `gzip -c` of the same bytes the export server streams; resolves with seconds and compressed size. */
async function gzipBaseline(): Promise<{ seconds: number; bytes: number; cpu: number }> {
  const t0 = performance.now();
  const gzip = spawn('gzip', ['-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let bytes = 0;
  let cpu = 0;
  gzip.stdout.on('data', (c: Buffer) => {
    bytes += c.length;
    cpu = cpuSeconds(gzip.pid!); // the last reading before it exits
  });
  const exited = new Promise((r) => gzip.once('exit', r));
  await pipeline(largeRawImageStream({ namespace: NS, volume: CLAIM, content: CONTENT }, BYTES), gzip.stdin);
  await exited;
  return { seconds: (performance.now() - t0) / 1000, bytes, cpu };
}

/** Downloads `url` with node:http, counting bytes in 'data' listeners as the baseline counts gzip's output. */
function download(url: string): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (res.statusCode !== 200) text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, text }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'corral-bench-'));
const kubeconfigPath = join(dir, 'kubeconfig');
const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50, kubeconfigPath });
const { child, url } = await startCorralProcess(kubeconfigPath);
try {
  await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
  const created = await fetch(`${url}/api/vms`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: VM, namespace: NS, import: 'https://images.corral.lan/bench/disk.img', disk: '2G' }),
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  const pvcs = resourceKey('', 'persistentvolumeclaims');
  const dvs = resourceKey('cdi.kubevirt.io', 'datavolumes');
  const phase = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;
  await waitFor(() => phase(sim.store.get(dvs, NS, CLAIM)) === 'Succeeded', 'the disk imported');
  // Warm-up: one small export (the 4 MiB image) loads the code paths, so "idle" means a Corral that has exported.
  const warm = await download(`${url}/api/vms/${NS}/${VM}/export`);
  if (warm.status !== 200) throw new Error(`warm-up export: ${warm.status} ${warm.text}`);
  sim.store.mutate(pvcs, NS, CLAIM, (pvc) => {
    pvc.metadata.annotations = {
      ...(pvc.metadata.annotations ?? {}),
      'sim.corral.dev/disk-content': CONTENT,
      'sim.corral.dev/export-bytes': String(BYTES),
    };
  });

  const load = loadavg()[0] ?? 0;
  // gzip runs before and after the export and the export is compared with their mean: on a shared machine the
  // load drifts over the minutes a run takes, and one baseline on one side of the export measured the drift too.
  const before = await gzipBaseline();
  const idleCpu0 = cpuSeconds(child.pid!);
  await new Promise((r) => setTimeout(r, 3000));
  const idleCpuRate = (cpuSeconds(child.pid!) - idleCpu0) / 3;
  const idle = rssMb(child.pid!);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child.pid!))), 100);
  const cpu0 = cpuSeconds(child.pid!);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await download(`${url}/api/vms/${NS}/${VM}/export`);
  if (res.status !== 200) throw new Error(`export: ${res.status} ${res.text}`);
  const compressed = res.bytes;
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const corralCpu = cpuSeconds(child.pid!) - cpu0;
  const self = process.cpuUsage(self0);
  const selfCpu = (self.user + self.system) / 1e6;
  const after = await gzipBaseline();
  const baseline = {
    seconds: (before.seconds + after.seconds) / 2,
    bytes: before.bytes,
    cpu: (before.cpu + after.cpu) / 2,
  };

  const mibs = (s: number) => (BYTES / 2 ** 20 / s).toFixed(0);
  console.log(
    [
      `export of a 1 GiB disk (raw.gz): ${seconds.toFixed(2)} s, ${mibs(seconds)} MiB/s raw, ${(compressed / 2 ** 20).toFixed(0)} MiB gzipped`,
      `gzip -c of the same bytes (mean of one run before and one after the export: ${before.seconds.toFixed(1)} s, ${after.seconds.toFixed(1)} s): ${baseline.seconds.toFixed(2)} s, ${mibs(baseline.seconds)} MiB/s, ${(baseline.bytes / 2 ** 20).toFixed(0)} MiB, gzip CPU ${baseline.cpu.toFixed(1)} s`,
      `throughput ratio export / gzip ${(baseline.seconds / seconds).toFixed(2)}× (aim ≥ 0.7×)`,
      `CPU during the export: Corral ${corralCpu.toFixed(1)} s (relay; ${idleCpuRate.toFixed(2)} s/s when idle), this process (embedded cluster serving the raw image + client) ${selfCpu.toFixed(1)} s, on ${availableParallelism()} cores`,
      `load average when the run began ${load.toFixed(1)} on ${availableParallelism()} cores`,
      `Corral RSS idle ${idle.toFixed(0)} MB, peak during the export ${peak.toFixed(0)} MB → +${(peak - idle).toFixed(0)} MB (aim +≤ 64 MB)`,
    ].join('\n  '),
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await sim.close();
}
