'use client';
// The scaffolding every VM action dialog shares: a Modal with a title, a body (a form when the action is one), the
// mutation's error line, and a Cancel / confirm footer whose button shows the pending state and says why it is
// disabled. Once a task-starting action has succeeded (`done`), Cancel reads Close and the confirm button goes.
import type { ReactNode } from 'react';
import { Modal } from '../Modal';

export function ActionDialog({
  title,
  open,
  onClose,
  label,
  busyLabel,
  busy,
  error,
  problem = null,
  disabled = false,
  confirmTitle,
  danger = false,
  form,
  onConfirm,
  done = false,
  after,
  children,
}: {
  title: string;
  open: boolean;
  /** Cancel, Esc and the backdrop. */
  onClose: () => void;
  /** The confirm button's text, and its text while `busy`. */
  label: string;
  busyLabel: string;
  busy: boolean;
  /** The mutation's error, shown under the body. */
  error: { message: string } | null;
  /** Why the action cannot go yet: disables the confirm button and titles it `label: problem`. */
  problem?: string | null;
  /** Disables the confirm button without a reason of its own. */
  disabled?: boolean;
  /** The confirm button's title, instead of the one `problem` gives. */
  confirmTitle?: string;
  danger?: boolean;
  /** The body is a form with this id, and the confirm button submits it (Enter does too). */
  form?: { id: string; onSubmit: () => void };
  /** The confirm button's click, when there is no form. */
  onConfirm?: () => void;
  /** The action has started: Cancel reads Close and there is nothing left to confirm. */
  done?: boolean;
  /** Under the error line, e.g. the started task's progress. */
  after?: ReactNode;
  children: ReactNode;
}) {
  const body = (
    <>
      {children}
      {error && <div className="inline-error">{error.message}</div>}
      {after}
    </>
  );
  return (
    <Modal
      title={title}
      open={open}
      onClose={onClose}
      footer={
        <>
          <button type="button" onClick={onClose}>
            {done ? 'Close' : 'Cancel'}
          </button>
          {!done && (
            <button
              type={form ? 'submit' : 'button'}
              form={form?.id}
              className={danger ? 'btn-danger solid' : 'btn-primary'}
              disabled={problem !== null || disabled || busy}
              title={confirmTitle ?? (problem ? `${label}: ${problem}` : undefined)}
              onClick={form ? undefined : onConfirm}
            >
              {busy ? busyLabel : label}
            </button>
          )}
        </>
      }
    >
      {form ? (
        <form
          id={form.id}
          className="modal-form"
          onSubmit={(e) => {
            e.preventDefault();
            form.onSubmit();
          }}
        >
          {body}
        </form>
      ) : (
        body
      )}
    </Modal>
  );
}
