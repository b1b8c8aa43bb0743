/**
 * Schedules (snapshot-schedules and power-schedules extensions): list, create, update, delete, run now and run
 * history. The schedule itself is a CronJob in Corral's namespace (schedules-spec.ts); the cluster's CronJob
 * controller starts its Job on time and the Job runs `corral schedule run <name>` (schedules-runner.ts), which
 * records the run in the schedule's runs ConfigMap. "Run now" runs the same code inside Corral as a task.
 *
 * Every run shows in Corral's task log: run now is a task from the start; a run the CronJob started is copied into
 * the journal (action `schedule-run`, caller `cronjob/<name>`) when Corral next reads the runs ConfigMaps — on a
 * timer while any schedule exists, and on every list or history read.
 */
import { cronProblem, nextRun, parseCron } from '../../lib/cron';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { parseRuns, runId, runSchedule, type ScheduleRun } from './schedules-runner';
import {
  cronJobName,
  definitionOf,
  EXTENSION_OF,
  RUNS_LABEL,
  runsConfigMapName,
  SCHEDULE_LABEL,
  scheduleCronJob,
  type ScheduleInput,
  type ScheduleTarget,
  type ScheduleType,
} from './schedules-spec';

export interface ScheduleRow {
  name: string;
  type: ScheduleType;
  cron: string;
  enabled: boolean;
  target: ScheduleTarget;
  keep?: number;
  action?: 'start' | 'stop';
  description?: string;
  /** The extension the schedule belongs to. */
  extension: string;
  /** Next time the CronJob fires (UTC ISO), null when suspended. */
  nextRun: string | null;
  /** A Job of this schedule is running now. */
  active: boolean;
  lastRun: ScheduleRun | null;
}

export interface ScheduleUpdate {
  cron?: string;
  enabled?: boolean;
  target?: ScheduleTarget;
  keep?: number;
  action?: 'start' | 'stop';
  description?: string;
}

export interface SchedulesOptions {
  /** Corral's image, which the runner Jobs run (CORRAL_IMAGE). */
  image: string;
  /** Whether an extension is installed (extensions.ts). */
  isInstalled(extension: string): Promise<boolean>;
  /** How often to copy CronJob runs into the task log; 0 turns the timer off (reads still copy). */
  syncMs?: number;
}

const TAG_RE = /^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$/i;

export class Schedules {
  /** Run ids already copied into the journal (or started there). */
  private readonly journaled = new Set<string>();
  private readonly since = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly deps: DomainDeps,
    private readonly options: SchedulesOptions,
  ) {
    const every = options.syncMs ?? 10_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.syncRuns().catch(() => {}), every);
      this.timer.unref?.();
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private get namespace(): string {
    return this.deps.config.defaultNamespace;
  }

  private async cronJobs(): Promise<KObject[]> {
    return this.deps.cluster.fetchList('CronJob', { namespace: this.namespace, labelSelector: SCHEDULE_LABEL });
  }

  private async runsByName(): Promise<Map<string, ScheduleRun[]>> {
    const cms = await this.deps.cluster.fetchList('ConfigMap', {
      namespace: this.namespace,
      labelSelector: RUNS_LABEL,
    });
    return new Map(cms.map((cm) => [cm.metadata.labels?.[RUNS_LABEL] ?? '', parseRuns(cm)]));
  }

  private toRow(cj: KObject, runs: ScheduleRun[]): ScheduleRow | undefined {
    const name = cj.metadata.labels?.[SCHEDULE_LABEL];
    const def = definitionOf(cj);
    if (!name || !def) return undefined;
    const spec = (cj.spec ?? {}) as { schedule?: string; suspend?: boolean };
    const status = (cj.status ?? {}) as { active?: unknown[] };
    const cron = spec.schedule ?? '';
    const enabled = spec.suspend !== true;
    let next: string | null = null;
    if (enabled && !cronProblem(cron)) next = nextRun(parseCron(cron), new Date())?.toISOString() ?? null;
    return {
      name,
      type: def.type,
      cron,
      enabled,
      target: def.target,
      ...(def.type === 'snapshot' ? { keep: def.keep ?? 7 } : { action: def.action ?? 'stop' }),
      ...(def.description ? { description: def.description } : {}),
      extension: EXTENSION_OF[def.type],
      nextRun: next,
      active: (status.active ?? []).length > 0,
      lastRun: runs[0] ?? null,
    };
  }

  async list(): Promise<ScheduleRow[]> {
    const [cjs, runs] = await Promise.all([this.cronJobs(), this.runsByName()]);
    this.journalRuns(runs);
    return cjs
      .map((cj) => this.toRow(cj, runs.get(cj.metadata.labels?.[SCHEDULE_LABEL] ?? '') ?? []))
      .filter((r): r is ScheduleRow => r !== undefined)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Schedules that take in this VM: its own and those of its tags. */
  async forVm(namespace: string, name: string): Promise<ScheduleRow[]> {
    const vm = this.deps.cluster.cache.get('VirtualMachine', namespace, name);
    if (!vm) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
    const labels = vm.metadata.labels ?? {};
    return (await this.list()).filter((s) =>
      s.target.kind === 'vm'
        ? s.target.namespace === namespace && s.target.name === name
        : labels[`corral.dev/tag.${s.target.tag}`] === 'true',
    );
  }

  async get(name: string): Promise<ScheduleRow> {
    const cj = await this.deps.cluster.fetch('CronJob', this.namespace, cronJobName(name));
    const row = cj && this.toRow(cj, (await this.runsByName()).get(name) ?? []);
    if (!row) throw new CorralError('NOT_FOUND', `no schedule named ${name}`);
    return row;
  }

  private validate(input: ScheduleInput): void {
    const problem = cronProblem(input.cron);
    if (problem) throw new CorralError('BAD_REQUEST', `cron: ${problem}`);
    if (input.type === 'snapshot' && input.action !== undefined)
      throw new CorralError('BAD_REQUEST', 'action: only power schedules take an action');
    if (input.type === 'power' && input.keep !== undefined)
      throw new CorralError('BAD_REQUEST', 'keep: only snapshot schedules keep snapshots');
    if (input.target.kind === 'tag' && !TAG_RE.test(input.target.tag))
      throw new CorralError('BAD_REQUEST', `target.tag: "${input.target.tag}" is not a valid tag`);
    if (
      input.target.kind === 'vm' &&
      !this.deps.cluster.cache.get('VirtualMachine', input.target.namespace, input.target.name)
    )
      throw new CorralError('NOT_FOUND', `VM ${input.target.namespace}/${input.target.name} not found`);
  }

  private async requireExtension(type: ScheduleType): Promise<void> {
    const extension = EXTENSION_OF[type];
    if (!(await this.options.isInstalled(extension)))
      throw new CorralError(
        'CONFLICT',
        `the ${extension} extension is not installed (Datacenter → Extensions) — ${type} schedules need it`,
      );
  }

  async create(caller: Caller, input: ScheduleInput): Promise<ScheduleRow> {
    this.validate(input);
    await this.requireExtension(input.type);
    if (await this.deps.cluster.fetch('CronJob', this.namespace, cronJobName(input.name)))
      throw new CorralError('CONFLICT', `a schedule named ${input.name} already exists`);
    const task = this.deps.journal.start('schedule-create', `schedule/${input.name}`, caller.identity.login);
    try {
      await this.deps.cluster.create('CronJob', scheduleCronJob(input, this.namespace, this.options.image));
      task.done(`created ${input.type} schedule ${input.name} (${input.cron}) as CronJob ${cronJobName(input.name)}`);
    } catch (err) {
      task.fail(err);
      throw err;
    }
    return this.get(input.name);
  }

  async update(caller: Caller, name: string, change: ScheduleUpdate): Promise<ScheduleRow> {
    const current = await this.get(name);
    const next: ScheduleInput = {
      name,
      type: current.type,
      cron: change.cron ?? current.cron,
      enabled: change.enabled ?? current.enabled,
      target: change.target ?? current.target,
      ...(current.type === 'snapshot'
        ? { keep: change.keep ?? current.keep }
        : { action: change.action ?? current.action }),
      ...((change.description ?? current.description)
        ? { description: change.description ?? current.description }
        : {}),
    };
    if (current.type === 'snapshot' && change.action !== undefined)
      throw new CorralError('BAD_REQUEST', 'action: only power schedules take an action');
    if (current.type === 'power' && change.keep !== undefined)
      throw new CorralError('BAD_REQUEST', 'keep: only snapshot schedules keep snapshots');
    this.validate(next);
    await this.requireExtension(current.type);
    const task = this.deps.journal.start('schedule-update', `schedule/${name}`, caller.identity.login);
    try {
      await this.deps.cluster.apply('CronJob', scheduleCronJob(next, this.namespace, this.options.image));
      task.done(`updated schedule ${name} (${next.cron}${next.enabled ? '' : ', disabled'})`);
    } catch (err) {
      task.fail(err);
      throw err;
    }
    return this.get(name);
  }

  async remove(caller: Caller, name: string): Promise<{ deleted: string; task: string }> {
    await this.get(name);
    const task = this.deps.journal.start('schedule-delete', `schedule/${name}`, caller.identity.login);
    try {
      await this.deps.cluster.remove('CronJob', this.namespace, cronJobName(name));
      // Owned by the CronJob (the garbage collector would take it); removed now so the name is free at once.
      await this.deps.cluster.remove('ConfigMap', this.namespace, runsConfigMapName(name));
      task.done(`deleted schedule ${name}; the snapshots it took stay`);
    } catch (err) {
      task.fail(err);
      throw err;
    }
    return { deleted: name, task: task.id };
  }

  /** Runs the schedule now inside Corral, as a task; answers when the run has finished. */
  async runNow(caller: Caller, name: string): Promise<{ task: string; run: ScheduleRun }> {
    const row = await this.get(name);
    await this.requireExtension(row.type);
    const task = this.deps.journal.start('schedule-run', `schedule/${name}`, caller.identity.login);
    // Known before the run is recorded, so a sync reading the runs meanwhile does not copy it in a second time.
    const id = runId(name, new Date());
    this.journaled.add(id);
    try {
      const run = await runSchedule(this.deps.cluster, this.namespace, name, {
        id,
        trigger: 'manual',
        by: caller.identity.login,
        log: (line) => task.log(line),
      });
      if (run.status === 'ok') task.done(run.message);
      else task.fail(new CorralError('BAD_GATEWAY', run.message));
      return { task: task.id, run };
    } catch (err) {
      task.fail(err);
      throw err;
    }
  }

  async runs(name: string): Promise<ScheduleRun[]> {
    await this.get(name);
    const runs = await this.runsByName();
    this.journalRuns(runs);
    return runs.get(name) ?? [];
  }

  /** Copies runs the CronJobs started (since this Corral started) into the task log. */
  async syncRuns(): Promise<void> {
    this.syncing ??= this.runsByName()
      .then((runs) => this.journalRuns(runs))
      .finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private journalRuns(byName: Map<string, ScheduleRun[]>): void {
    for (const runs of byName.values()) {
      for (const run of [...runs].reverse()) {
        if (this.journaled.has(run.id) || Date.parse(run.endedAt) < this.since) continue;
        this.journaled.add(run.id);
        const task = this.deps.journal.start('schedule-run', `schedule/${run.schedule}`, run.by);
        task.log(`run ${run.id} by CronJob ${cronJobName(run.schedule)}, ${run.startedAt} → ${run.endedAt}`);
        for (const line of run.lines) task.log(line);
        if (run.status === 'ok') task.done(run.message);
        else task.fail(new CorralError('BAD_GATEWAY', run.message));
      }
    }
  }
}
