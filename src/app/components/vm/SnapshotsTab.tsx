'use client';
// Snapshots, as Proxmox lays them out: a timeline from "now" down to the oldest snapshot, Take / Rollback / Delete
// with confirmations, and the running snapshot task's progress inline. The list is not in the live stream: it is
// read once and again whenever one of this VM's snapshot tasks (which do arrive live) starts or ends.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useLive, useTasks } from '../../lib/live';
import type { SnapshotRow, TaskRow } from '../../lib/model';
import { formatQuantity } from '../../lib/quantity';
import { useSession } from '../../lib/session';
import type { ActionState } from '../../lib/status';
import { useTRPC } from '../../lib/trpc';
import {
  deleteSnapshotState,
  newestFirst,
  rollbackState,
  snapshotNameProblem,
  SNAPSHOT_TASKS,
  suggestSnapshotName,
  takeSnapshotState,
} from '../../lib/vm-ops';
import { BlockedBy, useBlocker } from '../health/BlockedBy';
import { StatusText } from '../TasksPanel';
import { ActionDialog } from './ActionDialog';
import type { VmTabProps } from './tabs';
import { inContext } from '../../lib/cluster-links';
import { TextField } from '../TextField';

/** A 409 about what the cluster lacks (not e.g. a name already used): Take stays disabled with it. */
const SUPPORT_REFUSAL = /VolumeSnapshotClass|feature gate|snapshot API|not installed/i;

type Dialog = { kind: 'take' } | { kind: 'rollback'; snap: SnapshotRow } | { kind: 'delete'; snap: SnapshotRow };

/** A disabled control's reason, visible at phone width (where there is no hover for the title). */
export function WhyHint({ state, id }: { state: ActionState; id?: string }) {
  if (state.enabled) return null;
  return (
    <span className="why-hint" id={id}>
      {state.reason}
    </span>
  );
}

export function TaskProgress({ task, testId }: { task: TaskRow; testId?: string }) {
  const last = task.log.split('\n').filter(Boolean).at(-1) ?? '';
  return (
    <div className="task-inline" role="status" data-testid={testId}>
      <strong>{task.action}</strong> <StatusText task={task} />
      {task.status === 'running' && (
        <span className="progress" aria-label={`${Math.round(task.progress)}%`}>
          <span style={{ width: `${task.progress}%` }} />
        </span>
      )}
      <span className="page-sub task-inline-log">{task.status === 'error' ? task.error : last}</span>
    </div>
  );
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso || '—' : d.toLocaleString();
}

function phaseClass(row: SnapshotRow): string {
  if (row.phase === 'Failed') return 'status-error';
  if (row.ready) return 'status-done';
  return 'status-running';
}

export function SnapshotsTab({ vm, readOnly }: VmTabProps) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const session = useSession();
  const target = `${vm.namespace}/${vm.name}`;
  const options = trpc.snapshots.list.queryOptions(
    { namespace: vm.namespace, vm: vm.name, ...inContext(vm.context) },
    { retry: false },
  );
  const list = useQuery(options);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  // The server's 409 to a Take (no VolumeSnapshotClass for this VM's storage, the feature gate off): from then on
  // the button is disabled with that reason.
  const [refusal, setRefusal] = useState('');

  // This VM's snapshot tasks, newest first (the journal's order).
  const tasks = useTasks().filter((t) => t.target === target && SNAPSHOT_TASKS.has(t.action));
  const runningTask = tasks.find((t) => t.status === 'running');
  const latest = tasks[0];
  // Tasks that had ended when the tab first saw the live journal are history (the Tasks panel has them); later
  // ones stay shown. The journal arrives with the stream's snapshot, after the prefilled VM rows.
  const { link } = useLive();
  const history = useRef<Set<string> | null>(null);
  if (history.current === null && link === 'live')
    history.current = new Set(tasks.filter((t) => t.status !== 'running').map((t) => t.id));
  const showTask = latest && (latest.status === 'running' || (history.current && !history.current.has(latest.id)));
  // Refetch when a snapshot task starts, ends or moves on (not on mount: the query has just fetched).
  const signature = tasks
    .slice(0, 5)
    .map((t) => `${t.id}:${t.status}:${Math.floor(t.progress / 25)}`)
    .join(',');
  const seen = useRef(signature);
  useEffect(() => {
    if (seen.current === signature) return;
    seen.current = signature;
    void queryClient.invalidateQueries({ queryKey: options.queryKey });
  }, [signature]);

  const facts = {
    status: vm.status,
    running: vm.running,
    template: vm.template,
    hasDisk: vm.disk !== '',
    canSnapshot: session.capabilities?.canSnapshot,
  };
  // A failing doctor check (the Snapshot gate off, no VolumeSnapshotClass) says why, and links to its fix.
  const blocker = useBlocker('snapshots');
  const take = blocker
    ? { enabled: false, reason: blocker.reason }
    : takeSnapshotState(facts, { listError: list.error?.message || refusal || undefined, runningTask });
  const rows = newestFirst(list.data ?? []);

  return (
    <section className="panel" aria-labelledby="snapshots-title">
      <div className="panel-head">
        <h2 id="snapshots-title">Snapshots</h2>
        <span className="page-sub">
          {list.data ? `${rows.length} snapshot${rows.length === 1 ? '' : 's'}` : ''}
          {vm.running ? ' · taken online while the VM runs' : ''}
        </span>
        <span className="header-spacer" />
        {!readOnly && (
          <span className="control-with-why">
            <button
              type="button"
              className="btn-primary"
              disabled={!take.enabled}
              title={take.enabled ? `Take a snapshot of ${vm.name}` : `Take snapshot: ${take.reason}`}
              aria-describedby={take.enabled ? undefined : 'take-why'}
              onClick={() => setDialog({ kind: 'take' })}
            >
              Take snapshot
            </button>
            {blocker ? (
              <BlockedBy blocker={blocker} what="Snapshots" id="take-why" />
            ) : (
              <WhyHint state={take} id="take-why" />
            )}
          </span>
        )}
      </div>
      {latest && showTask && (
        <div className="panel-body snapshot-task">
          <TaskProgress task={latest} testId="snapshot-task" />
        </div>
      )}
      {list.isError ? (
        <div className="panel-body">
          <div className="inline-error" data-testid="snapshots-error">
            Snapshots unavailable: {list.error.message}
          </div>
        </div>
      ) : list.isPending ? (
        <div className="skeleton">Loading snapshots…</div>
      ) : (
        <div className="table-scroll">
          <table className="data-table snapshot-table" data-testid="snapshot-table">
            <thead>
              <tr>
                <th>Name</th>
                <th className="hide-phone">Taken</th>
                <th>Phase</th>
                <th className="hide-phone">Description</th>
                <th className="num hide-phone">Size</th>
                {!readOnly && (
                  <th>
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              <tr className="timeline-now">
                <td className={`timeline${rows.length === 0 ? ' last' : ''}`}>
                  <span className="timeline-dot now" aria-hidden />
                  <strong>NOW</strong>
                </td>
                <td colSpan={readOnly ? 4 : 5} className="page-sub timeline-now-text">
                  current state{rows.length === 0 ? ' · no snapshots yet' : ''}
                </td>
              </tr>
              {rows.map((row, i) => {
                const rollback = rollbackState(row, runningTask);
                const remove = deleteSnapshotState(runningTask);
                return (
                  <tr key={row.name} data-snapshot={row.name}>
                    <td className={`timeline${i === rows.length - 1 ? ' last' : ''}`}>
                      <span className="timeline-dot" aria-hidden />
                      <span className="mono">{row.name}</span>
                      <span className="show-phone page-sub">{when(row.creationTime)}</span>
                    </td>
                    <td className="hide-phone">{when(row.creationTime)}</td>
                    <td>
                      <span className={phaseClass(row)}>{row.phase || 'Pending'}</span>
                      {row.error && <div className="field-error">{row.error}</div>}
                    </td>
                    <td className="hide-phone snapshot-desc">{row.description || ''}</td>
                    <td className="num hide-phone">{row.size ? formatQuantity(row.size) : '—'}</td>
                    {!readOnly && (
                      <td className="row-actions">
                        <div className="row-actions-inner">
                          <button
                            type="button"
                            className="btn-small"
                            disabled={!rollback.enabled}
                            title={
                              rollback.enabled ? `Roll ${vm.name} back to ${row.name}` : `Rollback: ${rollback.reason}`
                            }
                            onClick={() => setDialog({ kind: 'rollback', snap: row })}
                          >
                            Rollback
                          </button>
                          <button
                            type="button"
                            className="btn-small btn-danger"
                            disabled={!remove.enabled}
                            title={remove.enabled ? `Delete snapshot ${row.name}` : `Delete: ${remove.reason}`}
                            onClick={() => setDialog({ kind: 'delete', snap: row })}
                          >
                            Delete
                          </button>
                          <WhyHint state={rollback.enabled ? remove : rollback} />
                        </div>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {!readOnly && (
        <>
          <TakeDialog vm={vm} open={dialog?.kind === 'take'} onClose={() => setDialog(null)} onRefused={setRefusal} />
          <RollbackDialog
            vm={vm}
            snap={dialog?.kind === 'rollback' ? dialog.snap : null}
            onClose={() => setDialog(null)}
          />
          <DeleteSnapshotDialog
            vm={vm}
            snap={dialog?.kind === 'delete' ? dialog.snap : null}
            onClose={() => setDialog(null)}
          />
        </>
      )}
    </section>
  );
}

function TakeDialog({
  vm,
  open,
  onClose,
  onRefused,
}: {
  vm: VmTabProps['vm'];
  open: boolean;
  onClose: () => void;
  onRefused: (reason: string) => void;
}) {
  const trpc = useTRPC();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  useEffect(() => {
    if (open) setName(suggestSnapshotName());
  }, [open]);
  const create = useMutation(
    trpc.snapshots.create.mutationOptions({
      onSuccess: () => close(),
      onError: (err) => {
        if (err.data?.code === 'CONFLICT' && SUPPORT_REFUSAL.test(err.message)) onRefused(err.message);
      },
    }),
  );
  const problem = snapshotNameProblem(name);
  const close = () => {
    create.reset();
    setDescription('');
    onClose();
  };
  return (
    <ActionDialog
      title={`Take a snapshot of ${vm.name}`}
      open={open}
      onClose={close}
      label="Take snapshot"
      busyLabel="Taking…"
      busy={create.isPending}
      error={create.error}
      problem={problem}
      form={{
        id: 'take-snapshot-form',
        onSubmit: () => {
          if (problem) return;
          create.mutate({
            namespace: vm.namespace,
            vm: vm.name,
            ...inContext(vm.context),
            name,
            ...(description.trim() ? { description: description.trim() } : {}),
          });
        },
      }}
    >
      {vm.running && (
        <p className="page-sub" style={{ margin: 0 }}>
          The VM runs: the snapshot is taken online (the guest agent freezes the filesystems when it is connected).
        </p>
      )}
      <TextField
        id="snapshot-name"
        label="Name"
        value={name}
        onValue={setName}
        error={problem}
        hint="A letter, then letters, digits, - or _ (up to 40)"
      />
      <div className="field">
        <label htmlFor="snapshot-description">Description</label>
        <textarea
          id="snapshot-description"
          rows={3}
          value={description}
          placeholder="e.g. before the kernel upgrade"
          onChange={(e) => setDescription(e.target.value)}
        />
      </div>
    </ActionDialog>
  );
}

function RollbackDialog({
  vm,
  snap,
  onClose,
}: {
  vm: VmTabProps['vm'];
  snap: SnapshotRow | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const restore = useMutation(trpc.snapshots.restore.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    restore.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={`Roll ${vm.name} back to ${snap?.name ?? ''}?`}
      open={snap !== null}
      onClose={close}
      label="Rollback"
      busyLabel="Rolling back…"
      busy={restore.isPending}
      error={restore.error}
      disabled={!snap}
      danger
      onConfirm={() =>
        snap && restore.mutate({ namespace: vm.namespace, vm: vm.name, ...inContext(vm.context), snap: snap.name })
      }
    >
      <p style={{ margin: 0 }}>
        The disks and the configuration return to the state of <strong className="mono">{snap?.name}</strong>
        {snap ? ` (${when(snap.creationTime)})` : ''}. Everything changed since then is lost.
      </p>
      {vm.running && (
        <p style={{ margin: 0 }} data-testid="rollback-restart">
          The VM is running: it is stopped, rolled back and started again.
        </p>
      )}
    </ActionDialog>
  );
}

function DeleteSnapshotDialog({
  vm,
  snap,
  onClose,
}: {
  vm: VmTabProps['vm'];
  snap: SnapshotRow | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const remove = useMutation(trpc.snapshots.delete.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={`Delete snapshot ${snap?.name ?? ''}?`}
      open={snap !== null}
      onClose={close}
      label="Delete"
      busyLabel="Deleting…"
      busy={remove.isPending}
      error={remove.error}
      disabled={!snap}
      danger
      onConfirm={() =>
        snap && remove.mutate({ namespace: vm.namespace, vm: vm.name, ...inContext(vm.context), snap: snap.name })
      }
    >
      <p style={{ margin: 0 }}>
        {vm.name} can no longer be rolled back to <strong className="mono">{snap?.name}</strong>. The VM itself is not
        changed.
      </p>
    </ActionDialog>
  );
}
