'use client';
// Cancel for a running task that accepts it (a cross-cluster move: docs/move.md "Cancel"). The task then undoes
// what it did and ends "cancelled by <login>"; until it has, the button says so. The server decides who may.
import { useMutation } from '@tanstack/react-query';
import type { TaskRow } from '../lib/model';
import { useTRPC } from '../lib/trpc';
import './task-cancel.css';

export function TaskCancelButton({ task, small }: { task: TaskRow; small?: boolean }) {
  const trpc = useTRPC();
  const cancel = useMutation(trpc.tasks.cancel.mutationOptions());
  if (task.status !== 'running') return null;
  const cancelling = task.cancelledBy !== undefined || cancel.isPending || cancel.isSuccess;
  if (!task.cancellable && !cancelling) return null;
  return (
    <span className="task-cancel">
      <button
        type="button"
        className={small ? 'btn-small btn-danger' : 'btn-danger'}
        disabled={cancelling}
        data-testid="task-cancel"
        aria-label={`Cancel task ${task.action} ${task.target}`}
        onClick={(e) => {
          e.stopPropagation(); // inside a task row, whose click opens the log
          cancel.mutate({ id: task.id });
        }}
        onKeyDown={(e) => e.stopPropagation()}
      >
        {cancelling ? 'Cancelling…' : 'Cancel'}
      </button>
      {cancel.error && (
        <span className="status-error" role="alert">
          {' '}
          {cancel.error.message}
        </span>
      )}
    </span>
  );
}
