'use client';
// Edit processors / memory: one `hardware.scale`, live when the VM can take it, else saved for the next restart.
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { HardwareView, VmRow } from '../../../lib/model';
import { formatQuantity } from '../../../lib/quantity';
import { useTRPC } from '../../../lib/trpc';
import { cpuProblem, memoryProblem } from '../../../lib/validation';
import { scaleMode } from '../../../lib/vm-hardware';
import { ActionDialog } from '../ActionDialog';
import { vmRef } from '../../../lib/cluster-links';

export function ScaleDialog({
  vm,
  hw,
  what,
  onClose,
}: {
  vm: VmRow;
  hw: HardwareView;
  what: 'cpu' | 'mem' | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const [value, setValue] = useState('');
  useEffect(() => {
    if (what === 'cpu') setValue(String(hw.cpu.vcpus));
    if (what === 'mem') setValue(hw.memory.size);
  }, [what]);
  const scale = useMutation(trpc.hardware.scale.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    scale.reset();
    onClose();
  };
  const cpu = Number(value);
  const problem =
    what === 'cpu' ? (value.trim() === '' ? 'vCPUs are required' : cpuProblem(cpu)) : memoryProblem(value);
  const mode = scaleMode(hw.running, hw.controls.liveScale);
  const floor = what === 'mem' && hw.running && hw.memory.bootSize ? hw.memory.bootSize : '';
  return (
    <ActionDialog
      title={what === 'cpu' ? `Processors of ${vm.name}` : `Memory of ${vm.name}`}
      open={what !== null}
      onClose={close}
      label={mode.live ? 'Apply live' : hw.running ? 'Apply and restart' : 'Save'}
      busyLabel="Applying…"
      busy={scale.isPending}
      error={scale.error}
      problem={problem}
      form={{
        id: 'scale-form',
        onSubmit: () => {
          if (problem) return;
          scale.mutate(what === 'cpu' ? { ...vmRef(vm), cpu } : { ...vmRef(vm), mem: value.trim() });
        },
      }}
    >
      <div className="field">
        <label htmlFor="scale-value">{what === 'cpu' ? 'vCPUs' : 'Memory'}</label>
        <input
          id="scale-value"
          value={value}
          inputMode={what === 'cpu' ? 'numeric' : undefined}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setValue(e.target.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby="scale-hint"
        />
        <span id="scale-hint" className={problem ? 'field-error' : 'field-hint'}>
          {problem ??
            (what === 'cpu'
              ? `Now ${hw.cpu.vcpus}${hw.cpu.maxSockets ? `; live up to ${hw.cpu.maxSockets} sockets` : ''}`
              : `Now ${formatQuantity(hw.memory.size)}${hw.memory.maxGuest ? `; live up to ${formatQuantity(hw.memory.maxGuest)}` : ''}${floor ? `; not below ${formatQuantity(floor)} while it runs` : ''}`)}
        </span>
      </div>
      <p className={mode.live ? 'page-sub' : 'pending-note'} style={{ margin: 0 }} data-testid="scale-mode">
        {mode.text}
      </p>
    </ActionDialog>
  );
}
