'use client';
// Migrate: pick a target node (or, live, let the scheduler choose); the move is a task whose progress shows here
// live. A stopped VM moves offline: it is pinned to the node it must be given, and starts there.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useNodes, useTask } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { StatusText } from '../TasksPanel';
import { ActionDialog } from './ActionDialog';
import { vmRef } from '../../lib/cluster-links';

export function MigrateDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const nodes = useNodes().filter((n) => n.name !== vm.node);
  const [target, setTarget] = useState('');
  const migrate = useMutation(trpc.vms.migrate.mutationOptions());
  const task = useTask(migrate.data?.task ?? null);
  const offline = !vm.running;
  const close = () => {
    migrate.reset();
    setTarget('');
    onClose();
  };
  return (
    <ActionDialog
      title={`Migrate ${vm.name}`}
      open={open}
      onClose={close}
      label="Migrate"
      busyLabel="Starting…"
      busy={migrate.isPending}
      error={migrate.error}
      confirmTitle={migrate.isPending ? 'The migration is being started' : undefined}
      problem={offline && !target ? 'pick the node the stopped VM moves to' : null}
      onConfirm={() => migrate.mutate({ ...vmRef(vm), targetNode: target || undefined })}
      done={migrate.isSuccess}
      after={
        migrate.isSuccess && (
          <div data-testid="migrate-progress">
            {task ? (
              <>
                <StatusText task={task} />{' '}
                <span className="progress" aria-label={`${task.progress}%`}>
                  <span style={{ width: `${task.progress}%` }} />
                </span>
                {task.error && <div className="inline-error">{task.error}</div>}
                <pre className="yaml mono" style={{ maxHeight: 140, borderRadius: 6 }}>
                  {task.log}
                </pre>
              </>
            ) : (
              <span className="page-sub">Task {migrate.data.task} started…</span>
            )}
          </div>
        )
      }
    >
      {offline ? (
        <p style={{ margin: 0 }} data-testid="migrate-offline">
          Offline: the stopped VM is pinned to the target node
          {vm.node ? (
            <>
              {' '}
              instead of <strong>{vm.node}</strong>
            </>
          ) : null}
          , listed there and started there next time. Its disks stay on their storage.
        </p>
      ) : (
        <p style={{ margin: 0 }}>
          Live-migrate from <strong>{vm.node || 'its node'}</strong> while it keeps running.
        </p>
      )}
      <div className="field">
        <label htmlFor="migrate-target">Target node</label>
        <select
          id="migrate-target"
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          disabled={migrate.isSuccess}
        >
          <option value="">{offline ? 'Pick a node' : 'Let the scheduler choose'}</option>
          {nodes.map((n) => (
            <option key={n.name} value={n.name} disabled={!n.ready || !n.schedulable}>
              {n.name}
              {!n.ready ? ' (not ready)' : !n.schedulable ? ' (cordoned)' : ''}
              {n.cpuVendor ? ` · ${n.cpuVendor}` : ''}
            </option>
          ))}
        </select>
      </div>
    </ActionDialog>
  );
}
