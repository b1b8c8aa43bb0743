'use client';
// "Move to pool…": the keyboard (and touch) way of what a drag onto a pool does. A select of every pool plus
// "No pool"; the guest leaves its old pool first (an instance is in one pool at most).
import { useState } from 'react';
import { Modal } from '../Modal';
import { usePoolWrites, type Listing, type Member } from './use-folders';

export function MoveToPoolDialog({
  listing,
  member,
  onClose,
}: {
  listing: Listing | undefined;
  member: Member | null;
  onClose: () => void;
}) {
  const writes = usePoolWrites();
  const current = listing?.folders.find((f) => f.members.some((m) => m.ref === member?.ref))?.path ?? '';
  const [target, setTarget] = useState<string | null>(null);
  const chosen = target ?? current;
  const [error, setError] = useState('');
  const close = () => {
    setTarget(null);
    setError('');
    onClose();
  };
  const submit = async () => {
    if (!member) return;
    try {
      await writes.place(listing, member.ref, chosen);
      close();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <Modal
      title={member ? `Move ${member.name} to pool` : 'Move to pool'}
      open={member !== null}
      onClose={close}
      footer={
        <>
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className="btn-primary"
            disabled={writes.placing || chosen === current}
            onClick={() => void submit()}
          >
            {writes.placing ? 'Moving…' : 'Move'}
          </button>
        </>
      }
    >
      <label className="pool-field">
        Pool
        <select value={chosen} onChange={(e) => setTarget(e.target.value)} aria-label="Pool">
          <option value="">No pool</option>
          {listing?.folders.map((f) => (
            <option key={f.path} value={f.path}>
              {f.path}
            </option>
          ))}
        </select>
      </label>
      {error && (
        <p className="result-err" role="alert">
          {error}
        </p>
      )}
    </Modal>
  );
}
