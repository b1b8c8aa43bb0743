'use client';
// The Hardware tab's Move disk (disks.move, a task in the Tasks panel): a stopped VM's disk is cloned onto another
// StorageClass and the VM switched to the copy; a running VM's disk is copied by a KubeVirt volume migration while
// the guest keeps running. The old volume is kept unless asked to delete it.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { HardwareView, VmRow } from '../../../lib/model';
import type { ActionState } from '../../../lib/status';
import { useTRPC } from '../../../lib/trpc';
import { ActionDialog } from '../ActionDialog';
import { vmRef } from '../../../lib/cluster-links';

type Disk = HardwareView['disks'][number];

const CLASS_NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/**
 * Whether a disk can move now: a claim-backed disk, of a stopped VM or — by a volume migration — one the running VM
 * started with (the server says the same, as a 409/400).
 */
export function moveDiskState(disk: Disk, running: boolean): ActionState {
  if (!disk.claim || disk.kind === 'containerDisk' || disk.kind === 'cloudInit' || disk.device === 'cdrom')
    return { enabled: false, reason: `${disk.name} is not on a volume that can move` };
  if (running && disk.hotplugged)
    return { enabled: false, reason: 'Stop the VM first: a hot-plugged disk cannot move while the VM runs' };
  return { enabled: true, reason: '' };
}

export function MoveDiskDialog({
  vm,
  hw,
  disk,
  running,
  onClose,
}: {
  vm: VmRow;
  hw: HardwareView;
  disk: Disk | null;
  running: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const [storageClass, setStorageClass] = useState('');
  const [deleteSource, setDeleteSource] = useState(false);
  const move = useMutation(trpc.disks.move.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    move.reset();
    setStorageClass('');
    setDeleteSource(false);
    onClose();
  };
  const classes = [...new Set(hw.disks.map((d) => d.storageClass).filter((c) => c && c !== disk?.storageClass))];
  const problem = !storageClass
    ? 'name the StorageClass to move to'
    : !CLASS_NAME.test(storageClass)
      ? 'must be a StorageClass name'
      : storageClass === disk?.storageClass
        ? `the disk is already on ${storageClass}`
        : null;
  return (
    <ActionDialog
      title={`Move ${disk?.name ?? ''} to another storage class`}
      open={disk !== null}
      onClose={close}
      label="Move"
      busyLabel="Starting…"
      busy={move.isPending}
      error={move.error}
      problem={storageClass ? problem : null}
      disabled={!!problem}
      form={{
        id: 'move-disk-form',
        onSubmit: () => {
          if (problem || !disk) return;
          move.mutate({
            ...vmRef(vm),
            disk: disk.name,
            storageClass,
            ...(deleteSource ? { deleteSource: true } : {}),
          });
        },
      }}
    >
      <p className="page-sub" style={{ margin: 0 }}>
        {running ? 'The VM keeps running: KubeVirt migrates' : 'CDI copies'} <span className="mono">{disk?.claim}</span>{' '}
        ({disk?.size}, now on {disk?.storageClass || 'the default class'}) to a new volume on the chosen class, then the
        VM uses the copy. Progress shows in the Tasks panel.
      </p>
      <div className="field">
        <label htmlFor="move-class">Storage class</label>
        <input
          id="move-class"
          value={storageClass}
          list="move-class-options"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setStorageClass(e.target.value.trim())}
          aria-invalid={storageClass && problem ? true : undefined}
          aria-describedby="move-class-hint"
        />
        <datalist id="move-class-options">
          {classes.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
        <span id="move-class-hint" className={storageClass && problem ? 'field-error' : 'field-hint'}>
          {(storageClass && problem) || 'e.g. nfs'}
        </span>
      </div>
      <label className="check">
        <input type="checkbox" checked={deleteSource} onChange={(e) => setDeleteSource(e.target.checked)} />
        <span>
          Delete the old volume <span className="mono">{disk?.claim}</span> once the VM uses the copy
        </span>
      </label>
    </ActionDialog>
  );
}
