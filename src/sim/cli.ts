/**
 * `npm run sim -- --port <p> --kubeconfig <file> [--fleet demo|empty|N] [--speed X] [--host H] [--no-metrics] [--clusters N]`
 * Starts the embedded cluster, writes the kubeconfig, prints a line containing `ready`, and stops cleanly on
 * SIGINT/SIGTERM. Bad flags print a clear message and exit with status 2.
 * `--clusters N` starts N independent clusters (contexts sim1 … simN, ports p, p+1, … or random with 0; the first
 * has --fleet, the others 3 VMs each) and writes one kubeconfig holding every context, for
 * `corral web --kubeconfig <file> --all-contexts`.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FleetName } from './module.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { startEmbeddedCluster, type EmbeddedCluster } from './index.js';

const USAGE =
  'usage: npm run sim -- --port <port> --kubeconfig <file> [--fleet demo|empty|<N>] [--speed <factor>] [--host <address>] [--no-metrics] [--clusters <N>]';

export interface CliOptions {
  port: number;
  host: string;
  kubeconfigPath: string;
  fleet: FleetName;
  speed: number;
  metricsServer: boolean;
  /** Independent clusters to start (contexts sim1 … simN when more than one). */
  clusters: number;
}

export class UsageError extends Error {}

export function parseCli(argv: string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        kubeconfig: { type: 'string' },
        fleet: { type: 'string', default: 'demo' },
        speed: { type: 'string', default: '1' },
        host: { type: 'string', default: '127.0.0.1' },
        'no-metrics': { type: 'boolean', default: false },
        clusters: { type: 'string', default: '1' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) throw new UsageError('');
  if (v.port === undefined) throw new UsageError('--port is required (0 picks a free port)');
  if (!/^\d+$/.test(v.port) || Number(v.port) > 65535)
    throw new UsageError(`--port must be an integer 0..65535, got "${v.port}"`);
  if (!v.kubeconfig) throw new UsageError('--kubeconfig <file> is required');
  let fleet: FleetName;
  if (v.fleet === 'demo' || v.fleet === 'empty') fleet = v.fleet;
  else if (/^\d+$/.test(v.fleet) && Number(v.fleet) >= 1 && Number(v.fleet) <= 10_000) fleet = Number(v.fleet);
  else throw new UsageError(`--fleet must be demo, empty or a VM count 1..10000, got "${v.fleet}"`);
  const clusters = Number(v.clusters);
  if (!/^\d+$/.test(v.clusters) || clusters < 1 || clusters > 16)
    throw new UsageError(`--clusters must be a count 1..16, got "${v.clusters}"`);
  const speed = Number(v.speed);
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new UsageError(`--speed must be a positive number, got "${v.speed}"`);
  return {
    port: Number(v.port),
    host: v.host,
    kubeconfigPath: resolve(v.kubeconfig),
    fleet,
    speed,
    metricsServer: !v['no-metrics'],
    clusters,
  };
}

async function main(): Promise<void> {
  let options: CliOptions;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message) console.error(`corral sim: ${err.message}`);
      console.error(USAGE);
      process.exit(2);
    }
    throw err;
  }
  if (options.clusters > 1) return startMany(options);
  const cluster = await startEmbeddedCluster(options);
  console.log(
    `corral sim ready at ${cluster.url} (fleet ${String(options.fleet)}, speed ${options.speed}); kubeconfig: ${options.kubeconfigPath}`,
  );
  stopOnSignals([cluster]);
}

/** One kubeconfig naming every cluster by its own context (each kubeconfigYaml has one cluster, user and context). */
export function mergedKubeconfig(clusters: { url: string; name: string }[]): string {
  const lines = ['apiVersion: v1', 'kind: Config', 'clusters:'];
  for (const c of clusters)
    lines.push(`- name: ${c.name}`, '  cluster:', `    server: "${c.url}"`, '    insecure-skip-tls-verify: true');
  lines.push('users:', '- name: corral-sim-admin', '  user:', '    token: "sim-admin-token"', 'contexts:');
  for (const c of clusters)
    lines.push(
      `- name: ${c.name}`,
      '  context:',
      `    cluster: ${c.name}`,
      '    user: corral-sim-admin',
      '    namespace: default',
    );
  lines.push(`current-context: ${clusters[0]?.name ?? ''}`, '');
  return lines.join('\n');
}

async function startMany(options: CliOptions): Promise<void> {
  const started: EmbeddedCluster[] = [];
  for (let i = 0; i < options.clusters; i++) {
    const { kubeconfigPath: _one, clusters: _n, ...rest } = options;
    started.push(
      await startEmbeddedCluster({
        ...rest,
        port: options.port === 0 ? 0 : options.port + i,
        fleet: i === 0 ? options.fleet : 3,
        contextName: `sim${i + 1}`,
      }),
    );
  }
  mkdirSync(dirname(options.kubeconfigPath), { recursive: true });
  writeFileSync(
    options.kubeconfigPath,
    mergedKubeconfig(started.map((c, i) => ({ url: c.url, name: `sim${i + 1}` }))),
    { mode: 0o600 },
  );
  console.log(
    `corral sim ready: ${started.map((c, i) => `sim${i + 1} at ${c.url}`).join(', ')} (speed ${options.speed}); kubeconfig: ${options.kubeconfigPath}`,
  );
  stopOnSignals(started);
}

function stopOnSignals(clusters: EmbeddedCluster[]): void {
  const cluster = { close: () => Promise.all(clusters.map((c) => c.close())) };
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`corral sim: ${signal}, shutting down`);
    cluster.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('corral sim: shutdown failed:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  main().catch((err: unknown) => {
    console.error('corral sim: failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
