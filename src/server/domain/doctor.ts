/**
 * The doctor: checks that say whether this cluster has everything Corral needs (KubeVirt and CDI healthy, the
 * feature gates Corral uses, storage that can grow and snapshot, metrics-server, Multus, Corral's own RBAC, its
 * namespace and ConfigMap, the apiserver's version and clock), each a row `{name, status, message, fixable, fix?}`,
 * and the fixes for the rows Corral can repair itself. Each area lives in its own file (doctor-kubevirt.ts,
 * doctor-storage.ts, doctor-rbac.ts, doctor-misc.ts); this file runs them, caches the report and applies fixes as
 * tasks.
 *
 * Every check reads live (the kinds it reads are not in the watch cache), so a report is cached for CACHE_MS and
 * dropped early when the cluster changes in a way the report depends on: a node joins or leaves, readiness flips,
 * Corral writes its sources ConfigMap, or a fix has run.
 */
import { CorralError, describeError } from '../errors';
import type { Caller, DomainDeps } from './deps';
import { kubevirtChecks } from './doctor-kubevirt';
import { miscChecks } from './doctor-misc';
import { rbacChecks } from './doctor-rbac';
import { storageChecks } from './doctor-storage';
import type { CheckRow, Feature, Finding } from './doctor-types';
import { invalidateCapabilityFacts } from './cluster-facts';

export type { CheckArea, CheckRow, CheckStatus, Feature, Finding } from './doctor-types';

const CACHE_MS = 15_000;

/** What a fix answers: one line per change, the tasks that made them, and the fixes that failed. */
export interface FixOutcome {
  fixed: string[];
  tasks: string[];
  failed: { name: string; error: string }[];
}

/** A Corral feature that a failing check turns off, and which check explains it. */
export interface Blocker {
  feature: Feature;
  check: string;
  reason: string;
}

function row(f: Finding): CheckRow {
  const { apply: _apply, warnTurnsOff: _warnTurnsOff, ...rest } = f;
  return rest;
}

export class Doctor {
  private cached: { at: number; findings: Finding[] } | undefined;
  private running: Promise<Finding[]> | undefined;
  private generation = 0;
  private readonly unsubscribe: () => void;
  private wasReady: boolean;

  constructor(
    private readonly deps: DomainDeps,
    private readonly now: () => number = Date.now,
  ) {
    this.wasReady = deps.cluster.isReady();
    this.unsubscribe = deps.cluster.onChange((event) => {
      const ready = deps.cluster.isReady();
      if (ready !== this.wasReady || (event.kind === 'Node' && event.type !== 'MODIFIED')) this.invalidate();
      this.wasReady = ready;
    });
  }

  /** Forget the cached report (the next read runs every check again). */
  invalidate(): void {
    this.generation++;
    this.cached = undefined;
  }

  close(): void {
    this.unsubscribe();
  }

  /** Every check's row, in a stable order (area by area). */
  async report(options: { refresh?: boolean } = {}): Promise<CheckRow[]> {
    return (await this.findings(options.refresh === true)).map(row);
  }

  /**
   * Corral features a failing check turns off, and those a warning leaves unusable (`warnTurnsOff`): the UI disables
   * their controls and links to the row.
   */
  async blockers(): Promise<Blocker[]> {
    const out: Blocker[] = [];
    for (const f of await this.findings(false)) {
      if (f.status !== 'fail' && !(f.status === 'warn' && f.warnTurnsOff)) continue;
      for (const feature of f.affects ?? []) out.push({ feature, check: f.name, reason: f.message });
    }
    return out;
  }

  /**
   * Runs the fix of check `name`, or of every failing or warning fixable check when `name` is omitted. Each fix is a
   * task whose log lists what it changed. Unknown names are 404; a check with nothing to fix is 409.
   */
  async fix(caller: Caller, name?: string): Promise<FixOutcome> {
    const findings = await this.findings(true);
    let targets: Finding[];
    if (name !== undefined) {
      const f = findings.find((x) => x.name === name);
      if (!f) {
        const known = findings.map((x) => x.name).join(', ');
        throw new CorralError('NOT_FOUND', `no doctor check named ${name} (checks: ${known})`);
      }
      if (f.status === 'ok') throw new CorralError('CONFLICT', `check ${name} is ok: nothing to fix`);
      if (!f.apply) throw new CorralError('CONFLICT', `check ${name} cannot be fixed by Corral: ${f.message}`);
      targets = [f];
    } else {
      targets = findings.filter((f) => f.status !== 'ok' && f.apply);
    }
    const outcome: FixOutcome = { fixed: [], tasks: [], failed: [] };
    for (const f of targets) {
      const task = this.deps.journal.start('doctor-fix', `doctor/${f.name}`, caller.identity.login);
      outcome.tasks.push(task.id);
      const changed: string[] = [];
      try {
        await f.apply!((line) => {
          changed.push(line);
          task.log(line);
        });
        outcome.fixed.push(...changed);
        task.done(changed.length ? `fixed ${f.name}` : `${f.name}: nothing needed changing`);
      } catch (err) {
        task.fail(err);
        outcome.fixed.push(...changed);
        const did = changed.length ? ` (changed before failing: ${changed.join('; ')})` : ' (nothing was changed)';
        outcome.failed.push({ name: f.name, error: `${describeError(err)}${did}` });
      }
    }
    this.invalidate();
    invalidateCapabilityFacts();
    if (name !== undefined && outcome.failed.length) {
      const failure = outcome.failed[0]!;
      throw new CorralError('BAD_GATEWAY', `fix ${name} failed: ${failure.error}`);
    }
    return outcome;
  }

  private async findings(refresh: boolean): Promise<Finding[]> {
    if (!refresh && this.cached && this.now() - this.cached.at < CACHE_MS) return this.cached.findings;
    if (!refresh && this.running) return this.running;
    const generation = this.generation;
    const run = runChecks(this.deps).then((findings) => {
      if (generation === this.generation) this.cached = { at: this.now(), findings };
      return findings;
    });
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }
}

/** Runs every area's checks concurrently; one area's failure to run is its rows' message, never an exception. */
export async function runChecks(deps: DomainDeps): Promise<Finding[]> {
  const areas = await Promise.all([miscChecks(deps), kubevirtChecks(deps), storageChecks(deps), rbacChecks(deps)]);
  return areas.flat();
}

/** Exit status of `corral doctor`: 1 when any check fails, else 0 (warnings do not fail it). */
export function doctorExitCode(rows: readonly Pick<CheckRow, 'status'>[]): 0 | 1 {
  return rows.some((r) => r.status === 'fail') ? 1 : 0;
}
