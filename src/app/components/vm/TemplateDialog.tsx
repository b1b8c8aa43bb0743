'use client';
// Convert to template / Unmark template, with a confirmation: used by the VM toolbar's More ▾ and the
// Datacenter's templates list.
import { useMutation } from '@tanstack/react-query';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from './ActionDialog';
import { vmRef } from '../../lib/cluster-links';

export function TemplateDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const on = !vm.template;
  const set = useMutation(trpc.templates.set.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    set.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={on ? `Convert ${vm.name} to a template?` : `Unmark ${vm.name} as a template?`}
      open={open}
      onClose={close}
      label={on ? 'Convert to template' : 'Unmark template'}
      busyLabel="Saving…"
      busy={set.isPending}
      error={set.error}
      onConfirm={() => set.mutate({ ...vmRef(vm), on })}
    >
      <p style={{ margin: 0 }}>
        {on
          ? 'A template is not started itself: new VMs are cloned from it (More ▾ → Clone, or Create VM → Template). It is listed under Templates on the Datacenter page.'
          : 'It becomes an ordinary VM again, listed with the others, and can be started.'}
      </p>
    </ActionDialog>
  );
}
