/**
 * `corral doctor [--fix] [--json] [--kubeconfig FILE] [--context NAME] [--namespace NS]` — the checks of
 * GET /api/doctor, run straight against a kubeconfig (no Corral server needed): the command an admin runs first on a
 * new cluster. `--fix` applies every fixable check's fix with the kubeconfig's own rights, prints what changed and
 * checks again. Exit status: 0 when nothing fails (warnings allowed), 1 when a check fails (or the cluster could not
 * be reached at all), 2 for a usage error. bin/corral.mjs runs this file with the project's Node 24 + tsx.
 */
import { pathToFileURL } from 'node:url';
import { KubeCluster, loadKubeConfig } from '../cluster';
import type { ClusterPort } from '../domain/cluster-port';
import { configFromEnv } from '../domain/services';
import { Doctor, doctorExitCode, type CheckRow, type FixOutcome } from '../domain/doctor';
import { TaskJournal } from '../domain/tasks';
import { FleetView } from '../domain/vm-rows';
import { describeError } from '../errors';

export const USAGE = `usage: corral doctor [--fix] [--json] [--kubeconfig FILE] [--context NAME] [--namespace NS]

  Checks that the cluster has what Corral needs (KubeVirt, CDI, feature gates, storage, snapshots,
  metrics-server, Multus, RBAC, clock) and says how to fix what it lacks.

  --fix          apply every fix Corral knows (enable feature gates, create the namespace, a snapshot class, …)
  --json         print the rows as JSON (with --fix: {"fixed", "failed", "checks"})
  --kubeconfig   kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --context      kubeconfig context (default: current-context)
  --namespace    Corral's namespace (default: $CORRAL_NAMESPACE or tailvm)

  Exit status: 0 nothing fails (warnings allowed), 1 a check fails, 2 usage error.`;

export interface DoctorArgs {
  fix: boolean;
  json: boolean;
  help: boolean;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export class UsageError extends Error {}

export function parseDoctorArgs(argv: string[]): DoctorArgs {
  const args: DoctorArgs = { fix: false, json: false, help: false };
  const valued = new Map<string, 'kubeconfig' | 'context' | 'namespace'>([
    ['--kubeconfig', 'kubeconfig'],
    ['--context', 'context'],
    ['--namespace', 'namespace'],
  ]);
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] ?? '';
    if (raw === '--fix') args.fix = true;
    else if (raw === '--json') args.json = true;
    else if (raw === '--help' || raw === '-h') args.help = true;
    else {
      const eq = raw.indexOf('=');
      const flag = eq > 0 ? raw.slice(0, eq) : raw;
      const key = valued.get(flag);
      if (!key) throw new UsageError(raw.startsWith('-') ? `unknown option '${raw}'` : `unexpected argument '${raw}'`);
      const value = eq > 0 ? raw.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
        throw new UsageError(`${flag} needs a value`);
      args[key] = value;
    }
  }
  return args;
}

const MARK = { ok: '✔ ok  ', warn: '! warn', fail: '✖ fail' } as const;

/** The rows grouped by area, one line each, the fix under a fixable one, and a count line. */
export function formatReport(rows: readonly CheckRow[]): string {
  const lines: string[] = [];
  const width = Math.max(...rows.map((r) => r.name.length), 4);
  for (const area of [...new Set(rows.map((r) => r.area))]) {
    lines.push(area);
    for (const r of rows.filter((x) => x.area === area)) {
      lines.push(`  ${MARK[r.status]}  ${r.name.padEnd(width)}  ${r.message}`);
      if (r.fixable && r.fix) lines.push(`  ${' '.repeat(8)}${' '.repeat(width)}  fix: ${r.fix} (corral doctor --fix)`);
    }
  }
  const count = (s: CheckRow['status']) => rows.filter((r) => r.status === s).length;
  lines.push('', `${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail`);
  return lines.join('\n');
}

function formatFixes(outcome: FixOutcome): string {
  const lines = outcome.fixed.map((l) => `  fixed: ${l}`);
  for (const f of outcome.failed) lines.push(`  failed: ${f.name}: ${f.error}`);
  return lines.length ? lines.join('\n') : '  nothing to fix';
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export type Connect = (args: DoctorArgs) => { cluster: ClusterPort; close(): Promise<void> };

const connectKube: Connect = (args) => {
  const cluster = new KubeCluster(
    loadKubeConfig({
      ...(args.kubeconfig ? { file: args.kubeconfig } : {}),
      ...(args.context ? { context: args.context } : {}),
    }),
  );
  return { cluster, close: () => cluster.stop() };
};

export async function runDoctorCli(argv: string[], io: Io, connect: Connect = connectKube): Promise<number> {
  let args: DoctorArgs;
  try {
    args = parseDoctorArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`corral doctor: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    io.out(USAGE);
    return 0;
  }
  let conn: ReturnType<Connect>;
  try {
    conn = connect(args);
  } catch (err) {
    io.err(`corral doctor: ${describeError(err)}`);
    return 1;
  }
  const { cluster } = conn;
  const fleet = new FleetView(cluster);
  const config = { ...configFromEnv(), ...(args.namespace ? { defaultNamespace: args.namespace } : {}) };
  const doctor = new Doctor({ cluster, journal: new TaskJournal(), fleet, config });
  try {
    if (!args.json)
      io.out(`Corral doctor: ${cluster.info.name} (${cluster.info.server}), namespace ${config.defaultNamespace}\n`);
    let fixed: FixOutcome | undefined;
    if (args.fix) {
      const cli = { identity: { login: 'corral doctor', name: 'corral doctor', admin: true, enforced: false } };
      fixed = await doctor.fix(cli);
      if (!args.json) io.out(`Fixes:\n${formatFixes(fixed)}\n`);
    }
    const rows = await doctor.report({ refresh: true });
    if (args.json) io.out(JSON.stringify(fixed ? { ...fixed, checks: rows } : rows, null, 2));
    else io.out(formatReport(rows));
    return doctorExitCode(rows);
  } finally {
    doctor.close();
    fleet.close();
    await conn.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runDoctorCli(process.argv.slice(2), {
    out: (t) => console.log(t),
    err: (t) => console.error(t),
  }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`corral doctor: ${describeError(err)}`);
      process.exit(1);
    },
  );
}
