'use client';
// Clone: target name, namespace, start. Within the namespace it is KubeVirt's VirtualMachineClone, into another
// one CDI copies each disk across namespaces; either way a task whose progress shows here live, and once it is
// done the clone's page opens.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useMemo, useState } from 'react';
import { useFleet, useTask, useVm } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { nameProblem } from '../../lib/validation';
import { cloneTargetProblem, type OpsFacts } from '../../lib/vm-ops';
import { BlockedBy, useBlocker } from '../health/BlockedBy';
import { ActionDialog } from './ActionDialog';
import { TaskProgress } from './SnapshotsTab';
import { inContext, vmPageHref } from '../../lib/cluster-links';
import { TextField } from '../TextField';

export function vmHref(namespace: string, name: string, tab = 'summary'): string {
  return `/vms/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}?tab=${tab}`;
}

export function CloneDialog({
  vm,
  facts,
  open,
  onClose,
}: {
  vm: VmRow;
  facts: OpsFacts;
  open: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const { state, version } = useFleet();
  const namespaces = useMemo(() => {
    void version;
    return [...new Set(state.vms.list().map((v) => v.namespace))].sort();
  }, [state, version]);
  const [target, setTarget] = useState('');
  const [namespace, setNamespace] = useState('');
  const [start, setStart] = useState(false);
  useEffect(() => {
    if (!open) return;
    setTarget(`${vm.name}-clone`.slice(0, 63));
    // Without snapshots only another namespace can work: leave the field for the user to fill.
    setNamespace(facts.canSnapshot === false ? '' : vm.namespace);
    setStart(false);
  }, [open, vm.name, vm.namespace, facts.canSnapshot]);
  const clone = useMutation(trpc.clones.create.mutationOptions());
  const task = useTask(clone.data?.task ?? null);
  // The clone is made in the source's cluster.
  const created = useVm(clone.data?.namespace ?? '', clone.data?.target ?? '', vm.context);
  const done = task?.status === 'done' && created !== undefined;
  useEffect(() => {
    if (done && clone.data) {
      onClose();
      clone.reset();
      router.push(
        vmPageHref(
          { namespace: clone.data.namespace, name: clone.data.target, context: vm.context },
          state.defaultContext,
          'summary',
        ),
      );
    }
  }, [done]);

  // A clone within the namespace is a snapshot: while a doctor check turns snapshots off, link to its row.
  const snapshotBlocker = useBlocker('snapshots');
  const targetProblem = nameProblem(target);
  const nsProblem = namespace === '' ? 'Namespace is required' : nameProblem(namespace);
  const elsewhere = namespace !== vm.namespace;
  const stateProblem = nsProblem ? null : cloneTargetProblem(facts, vm.namespace, namespace);
  const problem = targetProblem ?? nsProblem ?? stateProblem;
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
            ...inContext(vm.context),
            target,
            ...(elsewhere ? { namespace } : {}),
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
      <p className="page-sub" style={{ margin: 0 }} data-testid="clone-how">
        {elsewhere && !nsProblem
          ? `A full, independent copy into ${namespace}: CDI clones each disk across namespaces (the VM must be stopped), then the configuration is copied under the new name.`
          : 'A full, independent copy of the disks and configuration (KubeVirt VirtualMachineClone: snapshot + restore).'}
      </p>
      <TextField
        id="clone-target"
        label="Name of the new VM"
        value={target}
        disabled={clone.isSuccess}
        onValue={setTarget}
        error={targetProblem}
      />
      <div className="field">
        <label htmlFor="clone-namespace">Namespace</label>
        <input
          id="clone-namespace"
          list="clone-namespaces"
          value={namespace}
          autoComplete="off"
          spellCheck={false}
          disabled={clone.isSuccess}
          onChange={(e) => setNamespace(e.target.value)}
          aria-invalid={nsProblem ? true : undefined}
        />
        <datalist id="clone-namespaces">
          {namespaces.map((ns) => (
            <option key={ns} value={ns} />
          ))}
        </datalist>
        <span className={nsProblem || stateProblem ? 'field-error' : 'field-hint'} data-testid="clone-namespace-hint">
          {nsProblem ??
            stateProblem ??
            (elsewhere
              ? `must exist already; the copy's disks are DataVolumes cloned from ${vm.namespace}`
              : `default: the source namespace (${vm.namespace}); another one copies the disks with CDI`)}
        </span>
        {(namespace === '' || !elsewhere) && snapshotBlocker && (
          <BlockedBy blocker={snapshotBlocker} what="Clones within a namespace" />
        )}
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
