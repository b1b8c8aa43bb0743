/**
 * batch/v1 CronJob controller, following the upstream cronjob_controllerv2:
 * - on the sim clock's calendar (clock.now(), which runs `speed` times faster than real time) it finds the latest
 *   missed schedule time after `status.lastScheduleTime` (or after the controller first saw the CronJob) and starts
 *   one Job for it named `<cronjob>-<minutes since epoch>`, owned by the CronJob, with the jobTemplate's labels and
 *   annotations plus `batch.kubernetes.io/cronjob-scheduled-timestamp`;
 * - `suspend` stops new Jobs; `startingDeadlineSeconds` drops a schedule time that is too old (event
 *   MissSchedule); `concurrencyPolicy` Allow starts regardless, Forbid leaves the time pending while a Job is
 *   active (it starts once that Job ends, deadline permitting), Replace deletes the active Jobs first;
 * - `status.active` lists unfinished Jobs, `lastSuccessfulTime` the newest completion; finished Jobs beyond
 *   `successfulJobsHistoryLimit` (default 3) and `failedJobsHistoryLimit` (default 1) are deleted oldest first
 *   (background propagation: the garbage collector removes their pods).
 */
import { lastRunBetween, nextRun, parseCron, type CronSchedule } from '../../lib/cron.js';
import { recordEvent } from '../events.js';
import type { KObject } from '../store/types.js';
import { S } from './keys.js';
import { objId, type Runtime } from './runtime.js';
import { ownerRef, rec, spec, status, statusOf } from './util.js';

const COMPONENT = 'cronjob-controller';
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

export function startCronJobController(rt: Runtime): void {
  if (!rt.serves(S.cronJobs) || !rt.serves(S.jobs)) return;
  /** Sim time at which the controller first saw each CronJob (by uid): schedules count from there. */
  const firstSeen = new Map<string, number>();
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`cronjob:${ns ?? ''}/${name}`, () => reconcile(rt, firstSeen, ns, name));
  rt.on(S.cronJobs, (ev) => {
    if (ev.type === 'DELETED') {
      rt.cancelAll(objId('cronjob', ev.object));
      firstSeen.delete(ev.object.metadata.uid);
    } else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  rt.on(S.jobs, (ev) => {
    const owner = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'CronJob');
    if (owner) enqueue(ev.object.metadata.namespace, owner.name);
  });
  for (const cj of rt.list(S.cronJobs)) enqueue(cj.metadata.namespace, cj.metadata.name);
}

function finishedAs(job: KObject): 'Complete' | 'Failed' | undefined {
  for (const c of (status(job).conditions as unknown[] | undefined) ?? []) {
    const cond = rec(c);
    if ((cond.type === 'Complete' || cond.type === 'Failed') && cond.status === 'True') return cond.type;
  }
  return undefined;
}

function limit(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function jobRef(job: KObject): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.metadata.name,
    namespace: job.metadata.namespace,
    uid: job.metadata.uid,
    resourceVersion: job.metadata.resourceVersion,
  };
}

function scheduledAt(job: KObject): number {
  const stamp = Date.parse(job.metadata.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION] ?? '');
  return Number.isFinite(stamp) ? stamp : Date.parse(job.metadata.creationTimestamp ?? '') || 0;
}

function reconcile(rt: Runtime, firstSeen: Map<string, number>, ns: string | undefined, name: string): void {
  const cj = rt.get(S.cronJobs, ns, name);
  if (!cj || cj.metadata.deletionTimestamp) return;
  const uid = cj.metadata.uid;
  const now = rt.ctx.clock.now();
  if (!firstSeen.has(uid)) firstSeen.set(uid, now.getTime());
  const cjSpec = spec(cj);
  let schedule: CronSchedule;
  try {
    schedule = parseCron(String(cjSpec.schedule ?? ''));
  } catch (err) {
    recordEvent(rt.store, cj, 'UnparseableSchedule', `unparseable schedule: ${(err as Error).message}`, {
      type: 'Warning',
      component: COMPONENT,
    });
    return;
  }

  const jobs = rt
    .list(S.jobs, ns)
    .filter((j) => j.metadata.ownerReferences?.some((r) => r.uid === uid) && !j.metadata.deletionTimestamp)
    .sort((a, b) => scheduledAt(a) - scheduledAt(b));
  const active = jobs.filter((j) => !finishedAs(j));
  pruneHistory(rt, cj, jobs);

  const lastSuccess = jobs
    .filter((j) => finishedAs(j) === 'Complete')
    .map((j) => String(status(j).completionTime ?? ''))
    .filter(Boolean)
    .sort()
    .pop();

  let started: KObject | undefined;
  let scheduledTime: Date | undefined;
  if (cjSpec.suspend !== true) {
    const lastSchedule = Date.parse(String(status(cj).lastScheduleTime ?? ''));
    const since = new Date(Number.isFinite(lastSchedule) ? lastSchedule : firstSeen.get(uid)!);
    const due = lastRunBetween(schedule, since, now);
    const deadline = cjSpec.startingDeadlineSeconds;
    if (due && typeof deadline === 'number' && now.getTime() - due.getTime() > deadline * 1000) {
      recordEvent(rt.store, cj, 'MissSchedule', `Missed scheduled time to start a job: ${due.toISOString()}`, {
        type: 'Warning',
        component: COMPONENT,
      });
      scheduledTime = due; // counted as handled, like upstream: the next run is the next schedule time
    } else if (due) {
      const policy = cjSpec.concurrencyPolicy ?? 'Allow';
      if (policy === 'Forbid' && active.length) {
        // Left pending: lastScheduleTime stays, so the time is picked up once the active Job ends.
        recordEvent(rt.store, cj, 'JobAlreadyActive', 'Not starting job because prior execution is running', {
          component: COMPONENT,
        });
      } else {
        if (policy === 'Replace') {
          for (const j of active) {
            rt.store.delete(S.jobs, j.metadata.namespace, j.metadata.name, { propagationPolicy: 'Background' });
            recordEvent(rt.store, cj, 'SuccessfulDelete', `Deleted job ${j.metadata.name}`, { component: COMPONENT });
          }
          active.length = 0;
        }
        started = startJob(rt, cj, due);
        scheduledTime = due;
      }
    }
  }

  rt.store.mutate(S.cronJobs, ns, name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    const st = statusOf(o);
    const refs = [...active, ...(started ? [started] : [])].map(jobRef);
    if (refs.length) st.active = refs;
    else delete st.active;
    if (scheduledTime) st.lastScheduleTime = scheduledTime.toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (lastSuccess) st.lastSuccessfulTime = lastSuccess;
    if (JSON.stringify(o.status) === before) return false;
  });

  // Wake up at the next schedule time (an edit or a Job's change enqueues earlier).
  const next = nextRun(schedule, now);
  const tick = `${objId('cronjob', cj)}:tick`;
  rt.cancel(tick);
  if (next && cjSpec.suspend !== true)
    rt.after(tick, next.getTime() - now.getTime(), () => reconcile(rt, firstSeen, ns, name));
}

function startJob(rt: Runtime, cj: KObject, scheduled: Date): KObject | undefined {
  const template = rec(spec(cj).jobTemplate);
  const meta = rec(template.metadata);
  const name = `${cj.metadata.name}-${Math.floor(scheduled.getTime() / 60_000)}`;
  if (rt.get(S.jobs, cj.metadata.namespace, name)) return undefined;
  const job = rt.store.create(S.jobs, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cj.metadata.namespace,
      labels: { ...(rec(meta.labels) as Record<string, string>) },
      annotations: {
        ...(rec(meta.annotations) as Record<string, string>),
        [SCHEDULED_TIMESTAMP_ANNOTATION]: scheduled.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
      ownerReferences: [ownerRef(cj)],
    },
    spec: structuredClone(rec(template.spec)),
  });
  recordEvent(rt.store, cj, 'SuccessfulCreate', `Created job ${name}`, { component: COMPONENT });
  return job;
}

function pruneHistory(rt: Runtime, cj: KObject, jobs: KObject[]): void {
  const keep = {
    Complete: limit(spec(cj).successfulJobsHistoryLimit, 3),
    Failed: limit(spec(cj).failedJobsHistoryLimit, 1),
  };
  for (const outcome of ['Complete', 'Failed'] as const) {
    const done = jobs.filter((j) => finishedAs(j) === outcome);
    for (const j of done.slice(0, Math.max(0, done.length - keep[outcome]))) {
      rt.store.delete(S.jobs, j.metadata.namespace, j.metadata.name, { propagationPolicy: 'Background' });
      recordEvent(rt.store, cj, 'SuccessfulDelete', `Deleted job ${j.metadata.name}`, { component: COMPONENT });
    }
  }
}
