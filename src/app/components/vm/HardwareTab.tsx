'use client';
// Hardware, as Proxmox lays it out: one table of processors, memory, disks and NICs, each with its actions, and
// Add disk / Add NIC. Pending changes (saved, taken by the running VM at its next restart) are marked. The view is
// not in the live stream: it is read once and again when one of this VM's tasks moves on or its row changes.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useTasks } from '../../lib/live';
import type { HardwareView, VmRow } from '../../lib/model';
import { formatBytes, formatQuantity, parseQuantity } from '../../lib/quantity';
import type { ActionState } from '../../lib/status';
import { useTRPC } from '../../lib/trpc';
import { cpuProblem, diskProblem, memoryProblem } from '../../lib/validation';
import {
  controlState,
  orphanPending,
  pendingFor,
  pendingText,
  scaleMode,
  type PendingChange,
} from '../../lib/vm-hardware';
import { Modal } from '../Modal';
import { WhyHint } from './SnapshotsTab';
import type { VmTabProps } from './tabs';

const DISK_BUSES = ['scsi', 'virtio', 'sata'] as const;
const NIC_MODELS = ['virtio', 'e1000', 'e1000e', 'rtl8139'] as const;

/**
 * `hardware.get` for a VM, refetched when one of the VM's tasks starts, moves on or ends, and when the stream
 * replaces its row (a restart applies pending changes; a change behind Corral's back shows up there).
 */
export function useHardware(vm: VmRow) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = trpc.hardware.get.queryOptions({ namespace: vm.namespace, name: vm.name }, { retry: false });
  const query = useQuery(options);
  const target = `${vm.namespace}/${vm.name}`;
  const signature = useTasks()
    .filter((t) => t.target === target)
    .slice(0, 5)
    .map((t) => `${t.id}:${t.status}:${Math.floor(t.progress / 25)}`)
    .join(',');
  const seen = useRef({ signature, vm });
  useEffect(() => {
    // Not on mount: the query has just fetched.
    if (seen.current.signature === signature && seen.current.vm === vm) return;
    seen.current = { signature, vm };
    void queryClient.invalidateQueries({ queryKey: options.queryKey });
  }, [signature, vm]);
  return query;
}

/** A button whose disabled state says why (title, and visibly at phone width). */
export function ControlButton({
  label,
  state,
  title,
  onClick,
  className = 'btn-small',
}: {
  label: string;
  state: ActionState;
  title: string;
  onClick: () => void;
  className?: string;
}) {
  return (
    <button
      type="button"
      className={className}
      disabled={!state.enabled}
      title={state.enabled ? title : `${label}: ${state.reason}`}
      onClick={onClick}
    >
      {label}
    </button>
  );
}

export function PendingNote({ change, testId }: { change: PendingChange | undefined; testId?: string }) {
  if (!change) return null;
  return (
    <span className="pending-note" data-testid={testId} title="Saved; the running VM takes it at its next restart">
      pending: {pendingText(change)}
    </span>
  );
}

type Dialog =
  | { kind: 'cpu' }
  | { kind: 'mem' }
  | { kind: 'add-disk' }
  | { kind: 'add-nic' }
  | { kind: 'expand'; disk: HardwareView['disks'][number] }
  | { kind: 'detach'; disk: HardwareView['disks'][number] }
  | { kind: 'remove-nic'; nic: HardwareView['nics'][number] };

function diskLabel(d: HardwareView['disks'][number]): string {
  if (d.device === 'cdrom') return 'CD/DVD drive';
  if (d.kind === 'cloudInit') return 'Cloud-init drive';
  return 'Hard disk';
}

function Row({
  label,
  name,
  children,
  actions,
  pending,
  testId,
  data,
}: {
  label: string;
  name?: string;
  children: ReactNode;
  actions?: ReactNode;
  pending?: boolean;
  testId?: string;
  data?: Record<string, string>;
}) {
  return (
    <tr className={pending ? 'row-pending' : undefined} data-testid={testId} {...data}>
      <th scope="row" className="hw-device">
        {label}
        {name && <span className="mono page-sub hw-device-name">{name}</span>}
      </th>
      <td className="hw-value">{children}</td>
      {actions !== undefined && (
        <td className="row-actions">
          <div className="row-actions-inner">{actions}</div>
        </td>
      )}
    </tr>
  );
}

export function HardwareTab({ vm, readOnly }: VmTabProps) {
  const hw = useHardware(vm);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const close = () => setDialog(null);
  const data = hw.data;
  if (hw.isError)
    return (
      <section className="panel">
        <div className="panel-body">
          <div className="inline-error" data-testid="hardware-error">
            Hardware unavailable: {hw.error.message}
          </div>
        </div>
      </section>
    );
  if (!data) return <div className="skeleton">Loading hardware…</div>;

  const scale = controlState(data.controls.scale);
  const addDisk = controlState(data.controls.addDisk);
  const addNic = controlState(data.controls.addNic);
  const cpuPending = pendingFor(data.pending, 'cpu');
  const memPending = pendingFor(data.pending, 'memory');
  const { cpu, memory } = data;
  const actions = !readOnly;
  const mode = scaleMode(data.running, data.controls.liveScale);

  return (
    <section className="panel" aria-labelledby="hardware-title">
      <div className="panel-head">
        <h2 id="hardware-title">Hardware</h2>
        <span className="page-sub">
          {data.pending.length > 0
            ? `${data.pending.length} pending change${data.pending.length === 1 ? '' : 's'} until the next restart`
            : ''}
        </span>
        <span className="header-spacer" />
        {actions && (
          <>
            <span className="control-with-why">
              <ControlButton
                label="Add disk"
                state={addDisk}
                title={`Add a new blank disk to ${vm.name}`}
                onClick={() => setDialog({ kind: 'add-disk' })}
                className=""
              />
              <WhyHint state={addDisk} />
            </span>
            <span className="control-with-why">
              <ControlButton
                label="Add NIC"
                state={addNic}
                title={`Add a network device to ${vm.name}`}
                onClick={() => setDialog({ kind: 'add-nic' })}
                className=""
              />
              <WhyHint state={addNic} />
            </span>
          </>
        )}
      </div>
      {data.restartRequired && (
        <div className="panel-body hw-restart" role="status" data-testid="restart-required">
          <strong>Restart required:</strong> {data.restartRequired}
        </div>
      )}
      <div className="table-scroll">
        <table className="data-table hw-table" data-testid="hardware-table">
          <thead className="visually-hidden">
            <tr>
              <th>Device</th>
              <th>Value</th>
              {actions && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            <Row
              label="Processors"
              testId="hw-cpu"
              pending={cpuPending !== undefined}
              actions={
                actions ? (
                  <>
                    <ControlButton
                      label="Edit"
                      state={scale}
                      title={`Change the vCPUs of ${vm.name}: ${mode.live ? 'live' : 'needs a restart'}`}
                      onClick={() => setDialog({ kind: 'cpu' })}
                    />
                    <WhyHint state={scale} />
                  </>
                ) : undefined
              }
            >
              <span>
                {cpu.vcpus} vCPU{cpu.vcpus === 1 ? '' : 's'}{' '}
                <span className="page-sub">
                  ({cpu.sockets} socket{cpu.sockets === 1 ? '' : 's'}, {cpu.cores} core{cpu.cores === 1 ? '' : 's'},{' '}
                  {cpu.threads} thread{cpu.threads === 1 ? '' : 's'}
                  {cpu.maxSockets ? `; hot-plug up to ${cpu.maxSockets} sockets` : ''})
                </span>
              </span>
              {cpu.instancetype && <span className="page-sub"> · instancetype {cpu.instancetype}</span>}
              <PendingNote change={cpuPending} testId="hw-cpu-pending" />
            </Row>
            <Row
              label="Memory"
              testId="hw-mem"
              pending={memPending !== undefined}
              actions={
                actions ? (
                  <>
                    <ControlButton
                      label="Edit"
                      state={scale}
                      title={`Change the memory of ${vm.name}: ${mode.live ? 'live' : 'needs a restart'}`}
                      onClick={() => setDialog({ kind: 'mem' })}
                    />
                    <WhyHint state={scale} />
                  </>
                ) : undefined
              }
            >
              <span>{formatQuantity(memory.size) || '—'}</span>
              {memory.maxGuest && <span className="page-sub"> · hot-plug up to {formatQuantity(memory.maxGuest)}</span>}
              <PendingNote change={memPending} testId="hw-mem-pending" />
            </Row>
            {data.disks.map((d) => {
              const change = pendingFor(data.pending, `disk ${d.name}`);
              const expand = controlState(d.expand);
              const detach = controlState(d.detach);
              return (
                <Row
                  key={`disk-${d.name}`}
                  label={diskLabel(d)}
                  name={d.name}
                  pending={change !== undefined}
                  data={{ 'data-disk': d.name }}
                  actions={
                    actions ? (
                      <>
                        <ControlButton
                          label="Expand"
                          state={expand}
                          title={`Grow ${d.claim || d.name}`}
                          onClick={() => setDialog({ kind: 'expand', disk: d })}
                        />
                        <ControlButton
                          label="Detach"
                          state={detach}
                          title={`Detach ${d.name} from ${vm.name}`}
                          onClick={() => setDialog({ kind: 'detach', disk: d })}
                        />
                        <WhyHint state={expand.enabled ? detach : expand} />
                      </>
                    ) : undefined
                  }
                >
                  <span className="mono">{d.claim || d.kind}</span>
                  <span className="hw-facts">
                    {d.size && <span>size={formatQuantity(d.size)}</span>}
                    {d.bus && <span>bus={d.bus}</span>}
                    {d.storageClass && <span>storage={d.storageClass}</span>}
                    {d.bootOrder !== null && <span>boot={d.bootOrder}</span>}
                    {d.hotplugged && <span className="tag">hot-plugged</span>}
                  </span>
                  <PendingNote change={change} />
                </Row>
              );
            })}
            {orphanPending(
              data.pending,
              'disk',
              data.disks.map((d) => d.name),
            ).map((p) => (
              <Row key={p.field} label="Hard disk" name={p.field.slice(5)} pending actions={actions ? null : undefined}>
                <PendingNote change={p} />
              </Row>
            ))}
            {data.nics.map((n) => {
              const change = pendingFor(data.pending, `nic ${n.name}`);
              const remove = controlState(n.remove);
              return (
                <Row
                  key={`nic-${n.name}`}
                  label="Network device"
                  name={n.name}
                  pending={change !== undefined}
                  data={{ 'data-nic': n.name }}
                  actions={
                    actions ? (
                      <>
                        <ControlButton
                          label="Remove"
                          state={remove}
                          title={`Remove ${n.name} from ${vm.name}`}
                          onClick={() => setDialog({ kind: 'remove-nic', nic: n })}
                        />
                        <WhyHint state={remove} />
                      </>
                    ) : undefined
                  }
                >
                  <span className="mono">{n.model || 'virtio'}</span>
                  <span className="hw-facts">
                    <span>network={n.network}</span>
                    {n.mac && <span className="mono">mac={n.mac}</span>}
                    {n.bootOrder !== null && <span>boot={n.bootOrder}</span>}
                  </span>
                  <PendingNote change={change} />
                </Row>
              );
            })}
            {orphanPending(
              data.pending,
              'nic',
              data.nics.map((n) => n.name),
            ).map((p) => (
              <Row
                key={p.field}
                label="Network device"
                name={p.field.slice(4)}
                pending
                actions={actions ? null : undefined}
              >
                <PendingNote change={p} />
              </Row>
            ))}
          </tbody>
        </table>
      </div>
      {actions && (
        <>
          <ScaleDialog
            vm={vm}
            hw={data}
            what={dialog?.kind === 'cpu' || dialog?.kind === 'mem' ? dialog.kind : null}
            onClose={close}
          />
          <AddDiskDialog vm={vm} hw={data} open={dialog?.kind === 'add-disk'} onClose={close} />
          <AddNicDialog vm={vm} open={dialog?.kind === 'add-nic'} onClose={close} />
          <ExpandDialog vm={vm} disk={dialog?.kind === 'expand' ? dialog.disk : null} onClose={close} />
          <DetachDialog vm={vm} disk={dialog?.kind === 'detach' ? dialog.disk : null} onClose={close} />
          <RemoveNicDialog vm={vm} nic={dialog?.kind === 'remove-nic' ? dialog.nic : null} onClose={close} />
        </>
      )}
    </section>
  );
}

/** Cancel + a submit button for a form in a Modal. */
function FormFooter({
  form,
  label,
  busyLabel,
  busy,
  problem,
  onCancel,
  danger,
}: {
  form: string;
  label: string;
  busyLabel: string;
  busy: boolean;
  problem: string | null;
  onCancel: () => void;
  danger?: boolean;
}) {
  return (
    <>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      <button
        type="submit"
        form={form}
        className={danger ? 'btn-danger solid' : 'btn-primary'}
        disabled={problem !== null || busy}
        title={problem ? `${label}: ${problem}` : undefined}
      >
        {busy ? busyLabel : label}
      </button>
    </>
  );
}

function ScaleDialog({
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
    <Modal
      title={what === 'cpu' ? `Processors of ${vm.name}` : `Memory of ${vm.name}`}
      open={what !== null}
      onClose={close}
      footer={
        <FormFooter
          form="scale-form"
          label={mode.live ? 'Apply live' : hw.running ? 'Apply and restart' : 'Save'}
          busyLabel="Applying…"
          busy={scale.isPending}
          problem={problem}
          onCancel={close}
        />
      }
    >
      <form
        id="scale-form"
        className="modal-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          scale.mutate(
            what === 'cpu'
              ? { namespace: vm.namespace, name: vm.name, cpu }
              : { namespace: vm.namespace, name: vm.name, mem: value.trim() },
          );
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
        {scale.error && <div className="inline-error">{scale.error.message}</div>}
      </form>
    </Modal>
  );
}

function AddDiskDialog({ vm, hw, open, onClose }: { vm: VmRow; hw: HardwareView; open: boolean; onClose: () => void }) {
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
    <Modal
      title={`Add a disk to ${vm.name}`}
      open={open}
      onClose={close}
      footer={
        <FormFooter
          form="add-disk-form"
          label="Add disk"
          busyLabel="Adding…"
          busy={add.isPending}
          problem={problem}
          onCancel={close}
        />
      }
    >
      <form
        id="add-disk-form"
        className="modal-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          add.mutate({
            namespace: vm.namespace,
            name: vm.name,
            size: size.trim(),
            bus,
            ...(storageClass ? { storageClass } : {}),
          });
        }}
      >
        <p className="page-sub" style={{ margin: 0 }}>
          A new blank volume <span className="mono">{vm.name}-disk-&lt;n&gt;</span>, kept in the VM spec
          {hw.running ? ' and hot-plugged into the running guest' : ''}.
        </p>
        <div className="field">
          <label htmlFor="disk-size">Size</label>
          <input
            id="disk-size"
            value={size}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setSize(e.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby="disk-size-hint"
          />
          <span id="disk-size-hint" className={problem ? 'field-error' : 'field-hint'}>
            {problem ?? (parseQuantity(size) ? formatBytes(parseQuantity(size) ?? 0) : 'e.g. 10Gi')}
          </span>
        </div>
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
        {add.error && <div className="inline-error">{add.error.message}</div>}
      </form>
    </Modal>
  );
}

function AddNicDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
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
    <Modal
      title={`Add a network device to ${vm.name}`}
      open={open}
      onClose={close}
      footer={
        <FormFooter
          form="add-nic-form"
          label="Add NIC"
          busyLabel="Adding…"
          busy={add.isPending}
          problem={problem}
          onCancel={close}
        />
      }
    >
      <form
        id="add-nic-form"
        className="modal-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          add.mutate({ namespace: vm.namespace, name: vm.name, nad, model });
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
          <select
            id="nic-model"
            value={model}
            onChange={(e) => setModel(e.target.value as (typeof NIC_MODELS)[number])}
          >
            {NIC_MODELS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        {add.error && <div className="inline-error">{add.error.message}</div>}
      </form>
    </Modal>
  );
}

function ExpandDialog({
  vm,
  disk,
  onClose,
}: {
  vm: VmRow;
  disk: HardwareView['disks'][number] | null;
  onClose: () => void;
}) {
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
    <Modal
      title={`Expand ${disk?.claim || disk?.name || ''}`}
      open={disk !== null}
      onClose={close}
      footer={
        <FormFooter
          form="expand-form"
          label="Expand"
          busyLabel="Expanding…"
          busy={expand.isPending}
          problem={problem}
          onCancel={close}
        />
      }
    >
      <form
        id="expand-form"
        className="modal-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem || !disk) return;
          expand.mutate({ namespace: vm.namespace, name: vm.name, pvc: disk.claim || disk.name, size: size.trim() });
        }}
      >
        <div className="field">
          <label htmlFor="expand-size">New size</label>
          <input
            id="expand-size"
            value={size}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setSize(e.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby="expand-hint"
          />
          <span id="expand-hint" className={problem ? 'field-error' : 'field-hint'}>
            {problem ??
              `Now ${formatBytes(now)}; a volume only grows (storage class ${disk?.storageClass || 'default'})`}
          </span>
        </div>
        {expand.error && <div className="inline-error">{expand.error.message}</div>}
      </form>
    </Modal>
  );
}

function DetachDialog({
  vm,
  disk,
  onClose,
}: {
  vm: VmRow;
  disk: HardwareView['disks'][number] | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const [alsoDelete, setAlsoDelete] = useState(false);
  const detach = useMutation(trpc.hardware.removeVolume.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    detach.reset();
    setAlsoDelete(false);
    onClose();
  };
  return (
    <Modal
      title={`Detach ${disk?.name ?? ''} from ${vm.name}?`}
      open={disk !== null}
      onClose={close}
      footer={
        <>
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className="btn-danger solid"
            disabled={detach.isPending || !disk}
            onClick={() =>
              disk &&
              detach.mutate({
                namespace: vm.namespace,
                name: vm.name,
                vol: disk.claim || disk.name,
                ...(alsoDelete ? { delete: true } : {}),
              })
            }
          >
            {detach.isPending ? 'Detaching…' : alsoDelete ? 'Detach and delete' : 'Detach'}
          </button>
        </>
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
      {detach.error && <div className="inline-error">{detach.error.message}</div>}
    </Modal>
  );
}

function RemoveNicDialog({
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
    <Modal
      title={`Remove ${nic?.name ?? ''} from ${vm.name}?`}
      open={nic !== null}
      onClose={close}
      footer={
        <>
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className="btn-danger solid"
            disabled={remove.isPending || !nic}
            onClick={() => nic && remove.mutate({ namespace: vm.namespace, name: vm.name, iface: nic.name })}
          >
            {remove.isPending ? 'Removing…' : 'Remove'}
          </button>
        </>
      }
    >
      <p style={{ margin: 0 }}>
        The network device on <strong>{nic?.network}</strong> ({nic?.mac || 'no MAC'}) is removed from the VM spec
        {vm.running ? '; the running guest keeps it until its next restart' : ''}.
      </p>
      {remove.error && <div className="inline-error">{remove.error.message}</div>}
    </Modal>
  );
}
