'use client';
// Delete: shows everything that will go (the server's deletion plan) and asks for the VM's name.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from './ActionDialog';
import { vmRef } from '../../lib/cluster-links';

export function DeleteDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [typed, setTyped] = useState('');
  const plan = useQuery(trpc.vms.deletionPlan.queryOptions({ ...vmRef(vm) }, { enabled: open, staleTime: 0 }));
  const remove = useMutation(
    trpc.vms.delete.mutationOptions({
      onSuccess: () => {
        onClose();
        router.push('/');
      },
    }),
  );
  const close = () => {
    setTyped('');
    remove.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={`Delete ${vm.name}?`}
      open={open}
      onClose={close}
      label="Delete"
      busyLabel="Deleting…"
      busy={remove.isPending}
      error={remove.error}
      disabled={typed !== vm.name}
      confirmTitle={typed !== vm.name ? 'Type the VM name to confirm' : undefined}
      danger
      onConfirm={() => remove.mutate({ ...vmRef(vm) })}
    >
      {vm.running && <p style={{ margin: 0 }}>The VM is running: it will be stopped first.</p>}
      <div>
        <div className="field-label">This deletes</div>
        {plan.isPending ? (
          <span className="page-sub">Working out what belongs to the VM…</span>
        ) : plan.isError ? (
          <div className="inline-error">Could not list what will be deleted: {plan.error.message}</div>
        ) : (
          <ul className="delete-list" data-testid="deletion-plan">
            <li>
              VirtualMachine {vm.namespace}/{vm.name}
            </li>
            {plan.data.objects.map((o) => (
              <li key={`${o.kind}/${o.namespace}/${o.name}`}>
                {o.kind} {o.name} <span className="page-sub">— {o.why}</span>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="field">
        <label htmlFor="delete-confirm">
          Type <strong className="mono">{vm.name}</strong> to confirm
        </label>
        <input id="delete-confirm" autoComplete="off" value={typed} onChange={(e) => setTyped(e.target.value)} />
      </div>
    </ActionDialog>
  );
}
