'use client';
// The schedules table the Schedules page and a VM's Options view share: when, which VMs, what, next and last run;
// admins get Run now, Edit and Delete, everybody the run history (the last runs with their log lines).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import type { ScheduleRow } from '@/server/schemas/schedules';
import { useTask } from '../../lib/live';
import { cronText, targetText, whatText } from '../../lib/schedules';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from '../vm/ActionDialog';
import { TaskProgress } from '../vm/SnapshotsTab';

const when = (iso: string) => new Date(iso).toLocaleString();

export function useScheduleRefresh() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.schedules.list.queryKey() });
}

export function ScheduleTable({
  rows,
  readOnly,
  onEdit,
  testId = 'schedule-table',
}: {
  rows: ScheduleRow[];
  readOnly: boolean;
  onEdit: (row: ScheduleRow) => void;
  testId?: string;
}) {
  const trpc = useTRPC();
  const refresh = useScheduleRefresh();
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<ScheduleRow | null>(null);
  const run = useMutation(trpc.schedules.run.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(
    trpc.schedules.delete.mutationOptions({
      onSuccess: () => {
        setDeleting(null);
        void refresh();
      },
    }),
  );
  const task = useTask(run.data?.task ?? null);

  return (
    <>
      {run.error && <div className="inline-error">Run now failed: {run.error.message}</div>}
      {run.isSuccess && task && (
        <div className="sched-run-result" data-testid="schedule-run-result">
          <TaskProgress task={task} />
        </div>
      )}
      <div className="table-scroll sched-scroll">
        <table className="data-table sched-table" data-testid={testId}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">When</th>
              <th scope="col">VMs</th>
              <th scope="col">What</th>
              <th scope="col">Next run</th>
              <th scope="col">Last run</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <Fragment key={s.name}>
                <tr data-schedule={s.name} className={s.enabled ? undefined : 'row-muted'}>
                  <th scope="row">
                    {s.name}
                    {s.description && <div className="page-sub">{s.description}</div>}
                  </th>
                  <td>
                    <span title={s.cron}>{cronText(s.cron)}</span>
                    {!s.enabled && <span className="sched-badge">disabled</span>}
                  </td>
                  <td>{targetText(s.target)}</td>
                  <td>{whatText(s)}</td>
                  <td className="page-sub">{s.nextRun ? when(s.nextRun) : '—'}</td>
                  <td>
                    {s.active ? (
                      <span className="sched-badge">running</span>
                    ) : s.lastRun ? (
                      <span className={s.lastRun.status === 'ok' ? 'sched-ok' : 'sched-err'} title={s.lastRun.message}>
                        {s.lastRun.status === 'ok' ? '✔' : '✖'} {when(s.lastRun.endedAt)}
                      </span>
                    ) : (
                      <span className="page-sub">never</span>
                    )}
                  </td>
                  <td className="row-actions">
                    <div className="row-actions-inner">
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-expanded={open === s.name}
                        onClick={() => setOpen(open === s.name ? null : s.name)}
                      >
                        History
                      </button>
                      {!readOnly && (
                        <>
                          <button
                            type="button"
                            className="btn btn-small"
                            disabled={run.isPending}
                            onClick={() => run.mutate({ name: s.name })}
                          >
                            {run.isPending && run.variables.name === s.name ? 'Running…' : 'Run now'}
                          </button>
                          <button type="button" className="btn btn-small" onClick={() => onEdit(s)}>
                            Edit
                          </button>
                          <button type="button" className="btn btn-small" onClick={() => setDeleting(s)}>
                            Delete
                          </button>
                        </>
                      )}
                    </div>
                  </td>
                </tr>
                {open === s.name && (
                  <tr className="sched-history-row">
                    <td colSpan={7}>
                      <RunHistory name={s.name} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      <ActionDialog
        title={deleting ? `Delete schedule ${deleting.name}` : ''}
        open={deleting !== null}
        onClose={() => {
          remove.reset();
          setDeleting(null);
        }}
        label="Delete"
        busyLabel="Deleting…"
        busy={remove.isPending}
        error={remove.error}
        danger
        onConfirm={() => deleting && remove.mutate({ name: deleting.name })}
      >
        <p>This deletes the schedule&apos;s CronJob and its run history. The snapshots it took stay.</p>
      </ActionDialog>
    </>
  );
}

function RunHistory({ name }: { name: string }) {
  const trpc = useTRPC();
  const runs = useQuery(trpc.schedules.runs.queryOptions({ name }));
  if (runs.isError) return <div className="inline-error">{runs.error.message}</div>;
  if (!runs.data) return <div className="page-sub">Reading the runs…</div>;
  if (!runs.data.length) return <div className="page-sub">No runs yet.</div>;
  return (
    <ol className="sched-runs" data-testid="schedule-runs">
      {runs.data.map((r) => (
        <li key={r.id}>
          <span className={r.status === 'ok' ? 'sched-ok' : 'sched-err'}>{r.status === 'ok' ? '✔' : '✖'}</span>{' '}
          {when(r.startedAt)} · {r.trigger === 'manual' ? `run now by ${r.by}` : 'on schedule'} · {r.message}
          {r.lines.length > 0 && <pre className="sched-log">{r.lines.join('\n')}</pre>}
        </li>
      ))}
    </ol>
  );
}
