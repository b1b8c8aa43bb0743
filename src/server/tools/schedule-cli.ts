/**
 * `corral schedule run <name> [--namespace NS] [--kubeconfig FILE] [--context NAME]` — what a schedule's CronJob
 * Job runs (Corral's image, the extension's runner ServiceAccount): one run of the schedule (schedules-runner.ts),
 * against the in-cluster config by default. It prints each step, records the run in the schedule's runs ConfigMap
 * and exits 0 when every VM was done, 1 when the run failed (or the schedule is unknown), 2 for a usage error.
 * bin/corral.mjs runs this file with the project's Node 24 + tsx.
 */
import { pathToFileURL } from 'node:url';
import { KubeCluster, loadKubeConfig, type KubeconfigSource } from '../cluster';
import type { ClusterPort } from '../domain/cluster-port';
import { runSchedule } from '../domain/schedules-runner';
import { cronJobName } from '../domain/schedules-spec';
import { describeError } from '../errors';

export const USAGE = `usage: corral schedule run <name> [--namespace NS] [--kubeconfig FILE] [--context NAME]

  Runs a Corral schedule once: snapshots (and prunes) or starts/stops the VMs it names. A schedule's
  CronJob runs this; you can run it by hand with rights like the runner ServiceAccount's.

  --namespace    Corral's namespace, where the schedule's CronJob lives (default: $CORRAL_NAMESPACE or tailvm)
  --kubeconfig   kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --context      kubeconfig context (default: current-context)

  Exit status: 0 the run succeeded, 1 it failed, 2 usage error.`;

export interface ScheduleArgs {
  help: boolean;
  name?: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

export class UsageError extends Error {}

export function parseScheduleArgs(argv: string[]): ScheduleArgs {
  const args: ScheduleArgs = { help: false };
  const valued = new Map<string, 'kubeconfig' | 'context' | 'namespace'>([
    ['--kubeconfig', 'kubeconfig'],
    ['--context', 'context'],
    ['--namespace', 'namespace'],
  ]);
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] ?? '';
    if (raw === '--help' || raw === '-h') args.help = true;
    else if (!raw.startsWith('-')) positional.push(raw);
    else {
      const eq = raw.indexOf('=');
      const flag = eq > 0 ? raw.slice(0, eq) : raw;
      const key = valued.get(flag);
      if (!key) throw new UsageError(`unknown option '${raw}'`);
      const value = eq > 0 ? raw.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
        throw new UsageError(`${flag} needs a value`);
      args[key] = value;
    }
  }
  if (args.help) return args;
  const [verb, name, extra] = positional;
  if (verb !== 'run')
    throw new UsageError(verb === undefined ? 'missing subcommand (run)' : `unknown subcommand '${verb}'`);
  if (!name) throw new UsageError('missing schedule name');
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  args.name = name;
  return args;
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export type Connect = (source: KubeconfigSource) => { cluster: ClusterPort; close(): Promise<void> };

/** No informers: a run reads live, like `kubectl`. */
const connectKube: Connect = (source) => {
  const cluster = new KubeCluster(loadKubeConfig(source));
  return { cluster, close: () => cluster.stop() };
};

export async function runScheduleCli(
  argv: string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
  connect: Connect = connectKube,
  /** A kubeconfig given as text (the embedded cluster's kubelet hands one to the pod). */
  kubeconfigYaml?: string,
): Promise<number> {
  let args: ScheduleArgs;
  try {
    args = parseScheduleArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`corral schedule: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help || !args.name) {
    io.out(USAGE);
    return 0;
  }
  const namespace = args.namespace ?? (env.CORRAL_NAMESPACE?.trim() || 'tailvm');
  let conn: ReturnType<Connect>;
  try {
    conn = connect(
      kubeconfigYaml
        ? { yaml: kubeconfigYaml }
        : { ...(args.kubeconfig ? { file: args.kubeconfig } : {}), ...(args.context ? { context: args.context } : {}) },
    );
  } catch (err) {
    io.err(`corral schedule: ${describeError(err)}`);
    return 1;
  }
  try {
    const run = await runSchedule(conn.cluster, namespace, args.name, {
      trigger: 'schedule',
      by: `cronjob/${cronJobName(args.name)}`,
      log: (line) => io.out(line),
    });
    io.out(`${run.status === 'ok' ? 'done' : 'failed'}: ${run.message}`);
    return run.status === 'ok' ? 0 : 1;
  } catch (err) {
    io.err(`corral schedule: ${describeError(err)}`);
    return 1;
  } finally {
    await conn.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runScheduleCli(process.argv.slice(2), { out: (t) => console.log(t), err: (t) => console.error(t) }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`corral schedule: ${describeError(err)}`);
      process.exit(1);
    },
  );
}
