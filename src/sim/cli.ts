/**
 * `npm run sim -- --port <p> --kubeconfig <file> [--fleet demo|empty|N] [--speed X] [--host H] [--no-metrics]`
 * Starts the embedded cluster, writes the kubeconfig, prints a line containing `ready`, and stops cleanly on
 * SIGINT/SIGTERM. Bad flags print a clear message and exit with status 2.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FleetName } from './module.js';
import { startEmbeddedCluster } from './index.js';

const USAGE =
  'usage: npm run sim -- --port <port> --kubeconfig <file> [--fleet demo|empty|<N>] [--speed <factor>] [--host <address>] [--no-metrics]';

export interface CliOptions {
  port: number;
  host: string;
  kubeconfigPath: string;
  fleet: FleetName;
  speed: number;
  metricsServer: boolean;
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
  const cluster = await startEmbeddedCluster(options);
  console.log(
    `corral sim ready at ${cluster.url} (fleet ${String(options.fleet)}, speed ${options.speed}); kubeconfig: ${options.kubeconfigPath}`,
  );
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
