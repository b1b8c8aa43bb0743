'use client';
// The network device dialogs of the Hardware tab: Add NIC (on a Multus NetworkAttachmentDefinition) and Remove.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { HardwareView, VmRow } from '../../../lib/model';
import { useTRPC } from '../../../lib/trpc';
import { ActionDialog } from '../ActionDialog';
import { vmRef } from '../../../lib/cluster-links';

const NIC_MODELS = ['virtio', 'e1000', 'e1000e', 'rtl8139'] as const;

export function AddNicDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const nads = useQuery({ ...trpc.nads.list.queryOptions(undefined), enabled: open });
  const [nad, setNad] = useState('');
  const [model, setModel] = useState<(typeof NIC_MODELS)[number]>('virtio');
  const add = useMutation(trpc.hardware.addNic.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    add.reset();
    onClose();
  };
  // The VM's own namespace first; a NAD elsewhere is named namespace/name.
  const choices = (nads.data ?? [])
    .map((n) => ({
      ref: n.namespace === vm.namespace ? n.name : `${n.namespace}/${n.name}`,
      text: `${n.namespace === vm.namespace ? n.name : `${n.namespace}/${n.name}`}${n.type ? ` · ${n.type}` : ''}${n.bridge ? ` · bridge ${n.bridge}` : ''}${n.vlan !== undefined ? ` · VLAN ${n.vlan}` : ''}`,
      own: n.namespace === vm.namespace,
    }))
    .sort((a, b) => Number(b.own) - Number(a.own) || a.ref.localeCompare(b.ref));
  const first = choices[0]?.ref ?? '';
  useEffect(() => {
    if (open && !nad && first) setNad(first);
  }, [open, first]);
  const problem = nads.isPending ? 'loading the networks…' : nad ? null : 'no NetworkAttachmentDefinition to attach to';
  return (
    <ActionDialog
      title={`Add a network device to ${vm.name}`}
      open={open}
      onClose={close}
      label="Add NIC"
      busyLabel="Adding…"
      busy={add.isPending}
      error={add.error}
      problem={problem}
      form={{
        id: 'add-nic-form',
        onSubmit: () => {
          if (problem) return;
          add.mutate({ ...vmRef(vm), nad, model });
        },
      }}
    >
      <p className={vm.running ? 'pending-note' : 'page-sub'} style={{ margin: 0 }}>
        {vm.running
          ? 'The VM runs: the NIC is saved now and appears in the guest at its next restart.'
          : 'A secondary NIC on a Multus network; the MAC address is assigned for you.'}
      </p>
      <div className="field">
        <label htmlFor="nic-network">Network</label>
        <select id="nic-network" value={nad} onChange={(e) => setNad(e.target.value)}>
          {choices.length === 0 && <option value="">{nads.isPending ? 'Loading…' : 'No networks'}</option>}
          {choices.map((c) => (
            <option key={c.ref} value={c.ref}>
              {c.text}
            </option>
          ))}
        </select>
        {nads.error && <span className="field-error">{nads.error.message}</span>}
      </div>
      <div className="field">
        <label htmlFor="nic-model">Model</label>
        <select id="nic-model" value={model} onChange={(e) => setModel(e.target.value as (typeof NIC_MODELS)[number])}>
          {NIC_MODELS.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </div>
    </ActionDialog>
  );
}

export function RemoveNicDialog({
  vm,
  nic,
  onClose,
}: {
  vm: VmRow;
  nic: HardwareView['nics'][number] | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const remove = useMutation(trpc.hardware.removeNic.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <ActionDialog
      title={`Remove ${nic?.name ?? ''} from ${vm.name}?`}
      open={nic !== null}
      onClose={close}
      label="Remove"
      busyLabel="Removing…"
      busy={remove.isPending}
      error={remove.error}
      disabled={!nic}
      danger
      onConfirm={() => nic && remove.mutate({ ...vmRef(vm), iface: nic.name })}
    >
      <p style={{ margin: 0 }}>
        The network device on <strong>{nic?.network}</strong> ({nic?.mac || 'no MAC'}) is removed from the VM spec
        {vm.running ? '; the running guest keeps it until its next restart' : ''}.
      </p>
    </ActionDialog>
  );
}
