'use client';
// The disk dialogs of the Hardware tab: Add disk (a new blank volume), Expand (a volume only grows) and Detach
// (optionally deleting the volume).
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { HardwareView, VmRow } from '../../../lib/model';
import { formatBytes, parseQuantity } from '../../../lib/quantity';
import { useTRPC } from '../../../lib/trpc';
import { diskProblem } from '../../../lib/validation';
import { ActionDialog } from '../ActionDialog';
import { vmRef } from '../../../lib/cluster-links';
import { TextField } from '../../TextField';

const DISK_BUSES = ['scsi', 'virtio', 'sata'] as const;

type Disk = HardwareView['disks'][number];

export function AddDiskDialog({
  vm,
  hw,
  open,
  onClose,
}: {
  vm: VmRow;
  hw: HardwareView;
  open: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const [size, setSize] = useState('10Gi');
  const [storageClass, setStorageClass] = useState('');
  const [bus, setBus] = useState<(typeof DISK_BUSES)[number]>('scsi');
  const add = useMutation(trpc.hardware.addVolume.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    add.reset();
    onClose();
  };
  const classes = [...new Set(hw.disks.map((d) => d.storageClass).filter(Boolean))];
  const problem =
    diskProblem(size) ??
    (storageClass && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(storageClass)
      ? 'Storage class: lower-case letters, digits, - and .'
      : null);
  return (
    <ActionDialog
      title={`Add a disk to ${vm.name}`}
      open={open}
      onClose={close}
      label="Add disk"
      busyLabel="Adding…"
      busy={add.isPending}
      error={add.error}
      problem={problem}
      form={{
        id: 'add-disk-form',
        onSubmit: () => {
          if (problem) return;
          add.mutate({
            ...vmRef(vm),
            size: size.trim(),
            bus,
            ...(storageClass ? { storageClass } : {}),
          });
        },
      }}
    >
      <p className="page-sub" style={{ margin: 0 }}>
        A new blank volume <span className="mono">{vm.name}-disk-&lt;n&gt;</span>, kept in the VM spec
        {hw.running ? ' and hot-plugged into the running guest' : ''}.
      </p>
      <TextField
        id="disk-size"
        label="Size"
        value={size}
        onValue={setSize}
        error={problem}
        hint={parseQuantity(size) ? formatBytes(parseQuantity(size) ?? 0) : 'e.g. 10Gi'}
      />
      <div className="field">
        <label htmlFor="disk-class">Storage class</label>
        <input
          id="disk-class"
          value={storageClass}
          list="disk-class-options"
          placeholder="the cluster default"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setStorageClass(e.target.value.trim())}
        />
        <datalist id="disk-class-options">
          {classes.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </div>
      <div className="field">
        <label htmlFor="disk-bus">Bus</label>
        <select id="disk-bus" value={bus} onChange={(e) => setBus(e.target.value as (typeof DISK_BUSES)[number])}>
          {DISK_BUSES.map((b) => (
            <option key={b} value={b} disabled={hw.running && b === 'sata'}>
              {b}
              {hw.running && b === 'sata' ? ' (not hot-pluggable)' : ''}
            </option>
          ))}
        </select>
      </div>
    </ActionDialog>
  );
}

export function ExpandDialog({ vm, disk, onClose }: { vm: VmRow; disk: Disk | null; onClose: () => void }) {
  const trpc = useTRPC();
  const [size, setSize] = useState('');
  useEffect(() => {
    if (disk) setSize(disk.size);
  }, [disk]);
  const expand = useMutation(trpc.hardware.expand.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    expand.reset();
    onClose();
  };
  const bytes = parseQuantity(size);
  const now = disk?.sizeBytes ?? (disk ? parseQuantity(disk.size) : null) ?? 0;
  const problem =
    diskProblem(size) ?? (bytes !== null && bytes <= now ? `must be larger than now (${formatBytes(now)})` : null);
  return (
    <ActionDialog
      title={`Expand ${disk?.claim || disk?.name || ''}`}
      open={disk !== null}
      onClose={close}
      label="Expand"
      busyLabel="Expanding…"
      busy={expand.isPending}
      error={expand.error}
      problem={problem}
      form={{
        id: 'expand-form',
        onSubmit: () => {
          if (problem || !disk) return;
          expand.mutate({ ...vmRef(vm), pvc: disk.claim || disk.name, size: size.trim() });
        },
      }}
    >
      <TextField
        id="expand-size"
        label="New size"
        value={size}
        onValue={setSize}
        error={problem}
        hint={`Now ${formatBytes(now)}; a volume only grows (storage class ${disk?.storageClass || 'default'})`}
      />
    </ActionDialog>
  );
}

export function DetachDialog({ vm, disk, onClose }: { vm: VmRow; disk: Disk | null; onClose: () => void }) {
  const trpc = useTRPC();
  const [alsoDelete, setAlsoDelete] = useState(false);
  const detach = useMutation(trpc.hardware.removeVolume.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    detach.reset();
    setAlsoDelete(false);
    onClose();
  };
  return (
    <ActionDialog
      title={`Detach ${disk?.name ?? ''} from ${vm.name}?`}
      open={disk !== null}
      onClose={close}
      label={alsoDelete ? 'Detach and delete' : 'Detach'}
      busyLabel="Detaching…"
      busy={detach.isPending}
      error={detach.error}
      disabled={!disk}
      danger
      onConfirm={() =>
        disk &&
        detach.mutate({
          ...vmRef(vm),
          vol: disk.claim || disk.name,
          ...(alsoDelete ? { delete: true } : {}),
        })
      }
    >
      <p style={{ margin: 0 }}>
        The disk leaves the VM spec{vm.running ? ' and is unplugged from the running guest' : ''}.
      </p>
      {disk?.claim && (
        <label className="check">
          <input type="checkbox" checked={alsoDelete} onChange={(e) => setAlsoDelete(e.target.checked)} />
          <span>
            Also delete the volume <span className="mono">{disk.claim}</span> (its data is lost)
          </span>
        </label>
      )}
    </ActionDialog>
  );
}
