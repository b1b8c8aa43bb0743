'use client';
// Clone: target name, namespace, start. The full clone is a task whose progress shows here live; once it is done
// the clone's page opens.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { useTask, useVm } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { nameProblem } from '../../lib/validation';
import { ActionDialog } from './ActionDialog';
import { TaskProgress } from './SnapshotsTab';

export function vmHref(namespace: string, name: string, tab = 'summary'): string {
  return `/vms/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}?tab=${tab}`;
}

export function CloneDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [target, setTarget] = useState('');
  const [namespace, setNamespace] = useState('');
  const [start, setStart] = useState(false);
  useEffect(() => {
    if (!open) return;
    setTarget(`${vm.name}-clone`.slice(0, 63));
    setNamespace(vm.namespace);
    setStart(false);
  }, [open, vm.name, vm.namespace]);
  const clone = useMutation(trpc.clones.create.mutationOptions());
  const task = useTask(clone.data?.task ?? null);
  const created = useVm(clone.data?.namespace ?? '', clone.data?.target ?? '');
  const done = task?.status === 'done' && created !== undefined;
  useEffect(() => {
    if (done && clone.data) {
      onClose();
      clone.reset();
      router.push(vmHref(clone.data.namespace, clone.data.target));
    }
  }, [done]);

  const targetProblem = nameProblem(target);
  const nsProblem = namespace && nameProblem(namespace);
  const problem = targetProblem ?? (nsProblem || null);
  const close = () => {
    clone.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={vm.template ? `New VM from template ${vm.name}` : `Clone ${vm.name}`}
      open={open}
      onClose={close}
      label="Clone"
      busyLabel="Starting…"
      busy={clone.isPending}
      error={clone.error}
      problem={problem}
      done={clone.isSuccess}
      form={{
        id: 'clone-form',
        onSubmit: () => {
          if (problem !== null) return;
          clone.mutate({
            ns: vm.namespace,
            name: vm.name,
            target,
            ...(namespace && namespace !== vm.namespace ? { namespace } : {}),
            start,
          });
        },
      }}
      after={
        clone.isSuccess && (
          <div data-testid="clone-progress">
            {task ? <TaskProgress task={task} /> : <span className="page-sub">Task {clone.data.task} started…</span>}
            {task?.status === 'done' && !created && <span className="page-sub">Waiting for the new VM to appear…</span>}
          </div>
        )
      }
    >
      <p className="page-sub" style={{ margin: 0 }}>
        A full, independent copy of the disks and configuration (KubeVirt VirtualMachineClone: snapshot + restore).
      </p>
      <div className="field">
        <label htmlFor="clone-target">Name of the new VM</label>
        <input
          id="clone-target"
          value={target}
          autoComplete="off"
          spellCheck={false}
          disabled={clone.isSuccess}
          onChange={(e) => setTarget(e.target.value)}
          aria-invalid={targetProblem ? true : undefined}
        />
        {targetProblem && <span className="field-error">{targetProblem}</span>}
      </div>
      <div className="field">
        <label htmlFor="clone-namespace">Namespace</label>
        <input
          id="clone-namespace"
          value={namespace}
          autoComplete="off"
          spellCheck={false}
          disabled={clone.isSuccess}
          onChange={(e) => setNamespace(e.target.value)}
          aria-invalid={nsProblem ? true : undefined}
        />
        <span className={nsProblem ? 'field-error' : 'field-hint'}>
          {nsProblem || `KubeVirt clones within the source namespace (${vm.namespace})`}
        </span>
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={start}
          disabled={clone.isSuccess}
          onChange={(e) => setStart(e.target.checked)}
        />
        Start the new VM once it exists
      </label>
    </ActionDialog>
  );
}
