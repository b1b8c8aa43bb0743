'use client';
// The bottom Tasks panel, fed by the task journal through the live stream: running / failed / total, newest
// first, with duration and caller; a row opens the task's log, which keeps updating while it runs.
import { useEffect, useMemo, useState } from 'react';
import { useTask, useTasks } from '../lib/live';
import type { TaskRow } from '../lib/model';
import { formatDuration } from '../lib/quantity';
import { Modal } from './Modal';
import { TaskCancelButton } from './TaskCancelButton';

const SHOWN = 200;
const OPEN_KEY = 'corral-tasks-open';

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    // Only to advance the "duration" of running tasks on screen; no data is fetched.
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

function duration(t: TaskRow, now: number): string {
  const start = Date.parse(t.startedAt);
  const end = t.endedAt ? Date.parse(t.endedAt) : now;
  return formatDuration(end - start);
}

function time(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

export function StatusText({ task }: { task: TaskRow }) {
  const label =
    task.status === 'running'
      ? task.cancelledBy !== undefined
        ? `cancelling ${Math.round(task.progress)}%`
        : `running ${Math.round(task.progress)}%`
      : task.status === 'done'
        ? 'OK'
        : task.cancelledBy !== undefined
          ? 'cancelled'
          : 'failed';
  return <span className={`status-${task.status}`}>{label}</span>;
}

export function TasksPanel() {
  const tasks = useTasks();
  const [open, setOpen] = useState(true);
  const [logId, setLogId] = useState<string | null>(null);
  useEffect(() => {
    setOpen(localStorage.getItem(OPEN_KEY) !== 'false');
  }, []);
  const counts = useMemo(() => {
    let running = 0;
    let failed = 0;
    for (const t of tasks) {
      if (t.status === 'running') running++;
      else if (t.status === 'error') failed++;
    }
    return { running, failed, total: tasks.length };
  }, [tasks]);
  const now = useNow(open && counts.running > 0);

  return (
    <section className="tasks" aria-label="Tasks">
      <div className="tasks-bar">
        <button
          type="button"
          className="btn-ghost btn-small"
          aria-expanded={open}
          aria-controls="tasks-body"
          onClick={() => {
            localStorage.setItem(OPEN_KEY, String(!open));
            setOpen(!open);
          }}
        >
          {open ? '▾' : '▸'} <h2>Tasks</h2>
        </button>
        <div className="tasks-counts" data-testid="task-counts">
          <span className="status-running">{counts.running} running</span>
          <span className={counts.failed ? 'status-error' : undefined}>{counts.failed} failed</span>
          <span>{counts.total} total</span>
        </div>
      </div>
      {open && (
        <div className="tasks-body" id="tasks-body">
          {tasks.length === 0 ? (
            <div className="tree-more" style={{ padding: 12 }}>
              No tasks yet. Creating, starting, migrating or deleting a VM records a task here.
            </div>
          ) : (
            <table className="tasks-table">
              <thead>
                <tr>
                  <th>Started</th>
                  <th>Action</th>
                  <th>Target</th>
                  <th className="hide-phone">Caller</th>
                  <th>Duration</th>
                  <th>Status</th>
                </tr>
              </thead>
              <tbody>
                {tasks.slice(0, SHOWN).map((t) => (
                  <tr
                    key={t.id}
                    className="clickable"
                    tabIndex={0}
                    onClick={() => setLogId(t.id)}
                    onKeyDown={(e) => {
                      if (e.key === 'Enter' || e.key === ' ') {
                        e.preventDefault();
                        setLogId(t.id);
                      }
                    }}
                    aria-label={`Task ${t.action} ${t.target}: ${t.status}. Open log`}
                  >
                    <td>{time(t.startedAt)}</td>
                    <td>{t.action}</td>
                    <td>{t.target}</td>
                    <td className="hide-phone">{t.caller}</td>
                    <td>{duration(t, now)}</td>
                    <td>
                      <StatusText task={t} />
                      {t.status === 'error' && t.error ? <span className="status-error"> — {t.error}</span> : null}
                      <TaskCancelButton task={t} small />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      <TaskLogDialog id={logId} onClose={() => setLogId(null)} />
    </section>
  );
}

export function TaskLogDialog({ id, onClose }: { id: string | null; onClose: () => void }) {
  const task = useTask(id);
  const now = useNow(task?.status === 'running');
  return (
    <Modal
      title={task ? `Task: ${task.action} ${task.target}` : 'Task'}
      open={id !== null}
      onClose={onClose}
      footer={
        <>
          {task && <TaskCancelButton task={task} />}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </>
      }
    >
      {task ? (
        <>
          <dl className="kv">
            <dt>Status</dt>
            <dd>
              <StatusText task={task} />{' '}
              {task.status === 'running' && (
                <span className="progress" aria-label={`${task.progress}%`}>
                  <span style={{ width: `${task.progress}%` }} />
                </span>
              )}
            </dd>
            <dt>Caller</dt>
            <dd>{task.caller}</dd>
            <dt>Started</dt>
            <dd>{new Date(task.startedAt).toLocaleString()}</dd>
            <dt>Duration</dt>
            <dd>{duration(task, now)}</dd>
            <dt>Id</dt>
            <dd className="mono">{task.id}</dd>
          </dl>
          {task.error && <div className="inline-error">{task.error}</div>}
          <pre className="yaml" style={{ maxHeight: 260, borderRadius: 6 }} data-testid="task-log">
            {task.log || '(no log lines yet)'}
          </pre>
        </>
      ) : (
        <p>This task is no longer in the journal.</p>
      )}
    </Modal>
  );
}
