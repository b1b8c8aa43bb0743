/**
 * `npm run bench:console`: what the console bridge costs.
 *   throughput — VNC full-frame updates (Raw, ~1 MB each) read through Corral's /api/vnc bridge, as a ratio to the
 *                same reads straight from the embedded cluster's vnc subresource (aim >= 0.8);
 *   latency    — serial echo round trip (one key, its echo) through /api/tty minus the direct round trip, p50
 *                (aim <= 1 ms on loopback).
 *   capacity   — the sim renders frames slower than the bridge can carry them, so the VNC ratio mostly shows that
 *                the bridge keeps up; a blast server (64 KiB binary frames as fast as the socket takes them) behind
 *                the same gateway shows the bridge's own ceiling, again as a ratio to reading it directly.
 * By default the measuring clients (this process), Corral with the bridge, the embedded cluster and the blast
 * server are four processes, as browser, Corral and cluster are in a real deployment. BENCH_SIM=inproc runs
 * everything in one process (the `npm start` layout plus the clients, which then share the bridge's event loop).
 * Direct and bridged runs alternate (KubeVirt allows one session per console, so they cannot overlap) and the
 * medians are reported.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { createConsoleGateway } from '../src/server/consoles/gateway.js';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { attachToCorral } from '../src/server/consoles/index.js';
import { identityFor } from '../src/server/identity-http.js';
import { startCorral } from '../src/server/start.js';
import { startEmbeddedCluster } from '../src/sim/index.js';
import {
  StreamReader,
  readFramebufferUpdate,
  rfbHandshake,
  setEncodingsRaw,
  updateRequest,
} from '../tests/integration/consoles/rfb-client.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const FRAMES = Number(process.env.FRAMES ?? 40);
const ECHOES = Number(process.env.ECHOES ?? 300);
const WINDOW = Number(process.env.WINDOW ?? 4);

/** Opens a console socket; the reader is attached before 'open' because the first bytes may arrive with it. */
function open(url: string): Promise<{ ws: WebSocket; reader: StreamReader }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['plain.kubevirt.io'], { perMessageDeflate: false });
    const reader = new StreamReader(ws);
    ws.once('open', () => resolve({ ws, reader }));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode} for ${url}`)));
  });
}

async function closeAndSettle(ws: WebSocket): Promise<void> {
  await new Promise<void>((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve();
    ws.once('close', () => resolve());
    ws.close();
  });
  await new Promise((r) => setTimeout(r, 100)); // let the bridge release the session
}

/**
 * Bytes per second of full-frame updates with WINDOW requests in flight, so the pipe never idles and the figure
 * is throughput, not round trips (the echo RTT measures those).
 */
async function frameThroughput(url: string): Promise<number> {
  const { ws, reader } = await open(url);
  const init = await rfbHandshake(ws, reader);
  const bpp = init.bitsPerPixel / 8;
  ws.send(setEncodingsRaw());
  const request = updateRequest(false, init.width, init.height);
  ws.send(request);
  await readFramebufferUpdate(reader, bpp); // warm-up
  for (let i = 0; i < WINDOW; i++) ws.send(request);
  let bytes = 0;
  const start = performance.now();
  for (let i = 0; i < FRAMES; i++) {
    const rects = await readFramebufferUpdate(reader, bpp);
    bytes += rects.reduce((sum, r) => sum + r.pixels.length + 12, 4);
    if (i < FRAMES - WINDOW) ws.send(request);
  }
  const seconds = (performance.now() - start) / 1000;
  await closeAndSettle(ws);
  return bytes / seconds;
}

/** Round-trip times (ms) of single keys echoed by the guest's serial login prompt. */
async function echoRtts(url: string): Promise<number[]> {
  const { ws } = await open(url);
  let waiting: ((data: Buffer) => void) | null = null;
  ws.on('message', (d: Buffer) => waiting?.(d));
  await new Promise((r) => setTimeout(r, 300)); // let the greeting / boot output pass
  const rtts: number[] = [];
  for (let i = 0; i < ECHOES; i++) {
    const key = i % 60 === 59 ? '\x15' : 'x'; // Ctrl-U now and then keeps the line short
    const echoed = new Promise<void>((resolve) => {
      waiting = () => resolve();
    });
    const t0 = performance.now();
    ws.send(Buffer.from(key));
    await echoed;
    rtts.push(performance.now() - t0);
    waiting = null;
  }
  await closeAndSettle(ws);
  return rtts;
}

const BLAST_BYTES = Number(process.env.BLAST_MB ?? 256) * 1024 * 1024;

/** A "console" that sends BLAST_BYTES in 64 KiB frames as fast as the socket drains, then closes. */
async function startBlaster(): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: () => 'plain.kubevirt.io',
  });
  const server = http.createServer();
  const frame = Buffer.alloc(64 * 1024, 0xab);
  server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => {
      let sent = 0;
      const pump = () => {
        while (sent < BLAST_BYTES && ws.bufferedAmount < 4 * 1024 * 1024) {
          ws.send(frame, { binary: true });
          sent += frame.length;
        }
        if (sent >= BLAST_BYTES) ws.close(1000, 'done');
        else setImmediate(pump);
      };
      pump();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        server.close(() => resolve());
      }),
  };
}

async function blastThroughput(url: string): Promise<number> {
  const start = performance.now();
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(url, ['plain.kubevirt.io'], { perMessageDeflate: false });
    ws.on('message', (d: Buffer) => (bytes += d.length));
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
  if (bytes !== BLAST_BYTES) throw new Error(`blast lost bytes: ${bytes} of ${BLAST_BYTES}`);
  return bytes / ((performance.now() - start) / 1000);
}

/** Runs `args` with this Node + tsx and resolves with the first stdout line matching `ready`. */
function spawnReady(args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, match: m });
    });
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${out}`)),
    );
  });
}

interface Cluster {
  url: string;
  kubeconfig: string;
  close(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  if (process.env.BENCH_SIM === 'inproc') {
    const sim = await startEmbeddedCluster({ port: 0, fleet: 'demo', speed: 50 });
    return { url: sim.url, kubeconfig: sim.kubeconfig, close: () => sim.close() };
  }
  const file = join(mkdtempSync(join(tmpdir(), 'corral-bench-')), 'kubeconfig.yaml');
  const { child } = await spawnReady(
    ['src/sim/cli.ts', '--port', '0', '--kubeconfig', file, '--fleet', 'demo', '--speed', '50'],
    /ready/,
  );
  const kubeconfig = readFileSync(file, 'utf8');
  const url = /server:\s*"?([^"\s]+)"?/.exec(kubeconfig)?.[1];
  if (!url) throw new Error(`no server in ${file}`);
  return { url, kubeconfig, close: () => stopChild(child) };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function startRemoteBlaster(): Promise<{ url: string; close(): Promise<void> }> {
  if (process.env.BENCH_SIM === 'inproc') return startBlaster();
  const { child, match } = await spawnReady([fileURLToPath(import.meta.url), '--blaster'], /blaster (\S+)\n/);
  return { url: match[1]!, close: () => stopChild(child) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

interface Bridge {
  /** Corral's base URL (REST + /api/vnc, /api/tty). */
  url: string;
  /** A console gateway in front of the blast server. */
  blastFront: string;
  close(): Promise<void>;
}

/** Corral with the consoles plug-in, plus a gateway in front of the blast server, in this process. */
async function startBridgeHere(kubeconfigYaml: string, blasterUrl: string): Promise<Bridge> {
  const corral = await startCorral({
    kube: { yaml: kubeconfigYaml },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
  });
  await corral.cluster.cache.waitForSync(30_000);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfigYaml);
  attachToCorral({ http: corral.http, services: corral.services, kubeConfig, identityFor });
  const blastKc = new KubeConfig();
  blastKc.loadFromOptions({
    clusters: [{ name: 'b', server: blasterUrl, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'b', cluster: 'b', user: 'u' }],
    currentContext: 'b',
  });
  const gateway = createConsoleGateway({
    cluster: () => blastKc,
    resolveCaller: () => ({ login: 'bench', name: 'bench', admin: true }),
  });
  const front = http.createServer();
  front.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return {
    url: corral.url,
    blastFront: `ws://127.0.0.1:${(front.address() as AddressInfo).port}`,
    async close() {
      gateway.close();
      front.close();
      await corral.close();
    },
  };
}

/**
 * The bridge in its own process, like a real deployment (browser, Corral and cluster are three programs): the
 * measuring clients then do not share Corral's event loop. BENCH_SIM=inproc keeps everything in this process.
 */
async function startBridge(cluster: Cluster, blasterUrl: string): Promise<Bridge> {
  if (process.env.BENCH_SIM === 'inproc') return startBridgeHere(cluster.kubeconfig, blasterUrl);
  const file = join(mkdtempSync(join(tmpdir(), 'corral-bench-')), 'kubeconfig.yaml');
  writeFileSync(file, cluster.kubeconfig);
  const { child, match } = await spawnReady(
    [fileURLToPath(import.meta.url), '--bridge', file, blasterUrl],
    /bridge (\S+) (\S+)\n/,
  );
  return { url: match[1]!, blastFront: match[2]!, close: () => stopChild(child) };
}

async function main(): Promise<void> {
  const sim = await startCluster();
  const blaster = await startRemoteBlaster();
  const bridge = await startBridge(sim, blaster.url);
  try {
    let vm: { namespace: string; name: string } | undefined;
    for (let i = 0; i < 300 && !vm; i++) {
      const rows = (await (await fetch(`${bridge.url}/api/vms`)).json()) as {
        namespace: string;
        name: string;
        status: string;
      }[];
      vm = rows.find((r) => r.status === 'Running');
      if (!vm) await new Promise((r) => setTimeout(r, 100));
    }
    if (!vm) throw new Error('no running VM in the demo fleet');
    await new Promise((r) => setTimeout(r, 1500)); // past the simulated boot log
    const direct = (sub: string) =>
      `${sim.url.replace('http', 'ws')}/apis/subresources.kubevirt.io/v1/namespaces/${vm.namespace}/virtualmachineinstances/${vm.name}/${sub}`;
    const bridged = (kind: string) => `${bridge.url.replace('http', 'ws')}/api/${kind}/${vm.namespace}/${vm.name}`;

    const tput = { direct: [] as number[], bridged: [] as number[] };
    const rtt = { direct: [] as number[], bridged: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      tput.direct.push(await frameThroughput(direct('vnc')));
      tput.bridged.push(await frameThroughput(bridged('vnc')));
      rtt.direct.push(...(await echoRtts(direct('console'))));
      rtt.bridged.push(...(await echoRtts(bridged('tty'))));
    }
    // The bridge's own ceiling: the same gateway code in front of the blast server.
    const cap = { direct: [] as number[], bridged: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      cap.direct.push(
        await blastThroughput(
          `${blaster.url.replace('http', 'ws')}/apis/subresources.kubevirt.io/v1/namespaces/b/virtualmachineinstances/b/vnc`,
        ),
      );
      cap.bridged.push(await blastThroughput(`${bridge.blastFront}/api/vnc/b/b`));
      await new Promise((r) => setTimeout(r, 100));
    }

    const mb = (x: number) => (x / 1e6).toFixed(1);
    const capRatio = median(cap.bridged) / median(cap.direct);
    const ratio = median(tput.bridged) / median(tput.direct);
    const added = median(rtt.bridged) - median(rtt.direct);
    console.log(
      process.env.BENCH_SIM === 'inproc'
        ? 'layout: clients, Corral, embedded cluster and blast server in one process'
        : 'layout: clients | Corral | embedded cluster | blast server, each its own process',
    );
    console.log(
      `console bridge bench: VM ${vm.namespace}/${vm.name}, ${ROUNDS} rounds, ${FRAMES} full frames and ${ECHOES} echoes per round`,
    );
    console.log(
      `throughput  direct ${mb(median(tput.direct))} MB/s  bridged ${mb(median(tput.bridged))} MB/s  ratio ${ratio.toFixed(2)}  (aim >= 0.8)`,
    );
    console.log(
      `capacity    direct ${mb(median(cap.direct))} MB/s  bridged ${mb(median(cap.bridged))} MB/s  ratio ${capRatio.toFixed(2)}  (${BLAST_BYTES / 1048576} MiB blast, bridge ceiling)`,
    );
    console.log(
      `echo RTT p50  direct ${median(rtt.direct).toFixed(3)} ms  bridged ${median(rtt.bridged).toFixed(3)} ms  added ${added.toFixed(3)} ms  (aim <= 1 ms)`,
    );
    console.log(
      JSON.stringify({
        throughputRatio: Number(ratio.toFixed(3)),
        directMBps: Number(mb(median(tput.direct))),
        bridgedMBps: Number(mb(median(tput.bridged))),
        addedRttP50Ms: Number(added.toFixed(3)),
        capacityRatio: Number(capRatio.toFixed(3)),
        capacityBridgedMBps: Number(mb(median(cap.bridged))),
      }),
    );
  } finally {
    await bridge.close();
    await blaster.close();
    await sim.close();
  }
}

if (process.argv.includes('--blaster')) {
  void startBlaster().then((b) => process.stdout.write(`blaster ${b.url}\n`));
} else if (process.argv.includes('--bridge')) {
  const [file, blasterUrl] = process.argv.slice(process.argv.indexOf('--bridge') + 1);
  void startBridgeHere(readFileSync(file!, 'utf8'), blasterUrl!).then((b) => {
    process.stdout.write(`bridge ${b.url} ${b.blastFront}\n`);
    process.on('SIGTERM', () => void b.close().then(() => process.exit(0)));
  });
} else {
  runMain();
}

function runMain(): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`bench:console failed: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
