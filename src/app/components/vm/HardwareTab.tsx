'use client';
// Hardware, as Proxmox lays it out: one table of processors, memory, disks and NICs, each with its actions, and
// Add disk / Add NIC. Pending changes (saved, taken by the running VM at its next restart) are marked. The view is
// not in the live stream: it is read once and again when one of this VM's tasks moves on or its row changes.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useTasks } from '../../lib/live';
import type { HardwareView, VmRow } from '../../lib/model';
import { formatQuantity } from '../../lib/quantity';
import { useSession } from '../../lib/session';
import type { ActionState } from '../../lib/status';
import { useTRPC } from '../../lib/trpc';
import {
  controlState,
  orphanPending,
  pendingFor,
  pendingText,
  scaleMode,
  type PendingChange,
} from '../../lib/vm-hardware';
import { ScaleDialog } from './hardware/CpuMemoryDialogs';
import { AddDiskDialog, DetachDialog, ExpandDialog } from './hardware/DiskDialogs';
import { AddNicDialog, RemoveNicDialog } from './hardware/NicDialogs';
import { MoveDiskDialog, moveDiskState } from './hardware/MoveDiskDialog';
import { gated, useBlocker, WhyOrBlocked as Why } from '../health/BlockedBy';
import { WhyHint } from './SnapshotsTab';
import type { VmTabProps } from './tabs';
import { vmRef } from '../../lib/cluster-links';

/**
 * `hardware.get` for a VM, refetched when one of the VM's tasks starts, moves on or ends, and when the stream
 * replaces its row (a restart applies pending changes; a change behind Corral's back shows up there).
 */
export function useHardware(vm: VmRow) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = trpc.hardware.get.queryOptions({ ...vmRef(vm) }, { retry: false });
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

/** A tab whose data could not be read: the error alone in its panel. */
export function PanelError({ testId, children }: { testId?: string; children: ReactNode }) {
  return (
    <section className="panel">
      <div className="panel-body">
        <div className="inline-error" data-testid={testId}>
          {children}
        </div>
      </div>
    </section>
  );
}

type Dialog =
  | { kind: 'cpu' }
  | { kind: 'mem' }
  | { kind: 'add-disk' }
  | { kind: 'add-nic' }
  | { kind: 'expand'; disk: HardwareView['disks'][number] }
  | { kind: 'detach'; disk: HardwareView['disks'][number] }
  | { kind: 'move'; disk: HardwareView['disks'][number] }
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
  // The HotplugVolumes gate off: the doctor row that explains (and fixes) it.
  const hotplugBlocker = useBlocker('hotplug');
  // No Multus/NAD: no NIC to add. The default class cannot grow: its disks' Expand names the row.
  const nicBlocker = useBlocker('networks');
  const growBlocker = useBlocker('expand');
  const defaultClass = useSession().capabilities?.storageClass;
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const close = () => setDialog(null);
  const data = hw.data;
  if (hw.isError) return <PanelError testId="hardware-error">Hardware unavailable: {hw.error.message}</PanelError>;
  if (!data) return <div className="skeleton">Loading hardware…</div>;

  const scale = controlState(data.controls.scale);
  // Only a running VM hot-plugs; a stopped one takes the disk into its spec whatever the gate.
  const diskBlocker = data.running ? hotplugBlocker : undefined;
  const addDisk = gated(controlState(data.controls.addDisk), diskBlocker);
  const addNic = gated(controlState(data.controls.addNic), nicBlocker);
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
              <Why state={addDisk} blocker={diskBlocker} what="Disk hot-plugs" />
            </span>
            <span className="control-with-why">
              <ControlButton
                label="Add NIC"
                state={addNic}
                title={`Add a network device to ${vm.name}`}
                onClick={() => setDialog({ kind: 'add-nic' })}
                className=""
              />
              <Why state={addNic} blocker={nicBlocker} what="Bridged NICs" />
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
                        <ControlButton
                          label="Move"
                          state={moveDiskState(d, data.running)}
                          title={`Move ${d.claim || d.name} to another storage class`}
                          onClick={() => setDialog({ kind: 'move', disk: d })}
                        />
                        <Why
                          state={expand.enabled ? detach : expand}
                          blocker={!expand.enabled && d.storageClass === defaultClass ? growBlocker : undefined}
                          what="Disk resizes"
                        />
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
          <MoveDiskDialog
            vm={vm}
            hw={data}
            disk={dialog?.kind === 'move' ? dialog.disk : null}
            running={data.running}
            onClose={close}
          />
          <RemoveNicDialog vm={vm} nic={dialog?.kind === 'remove-nic' ? dialog.nic : null} onClose={close} />
        </>
      )}
    </section>
  );
}
