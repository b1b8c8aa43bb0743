'use client';
// Options, as Proxmox lays them out: start on boot (KubeVirt's run strategy), firmware and secure boot, boot order
// and description, each with Edit. Firmware and boot order of a running VM are saved and pending (orange) until
// its next restart; the run strategy and description apply at once. Under them, this VM's snapshot and power
// schedules (VmSchedules).
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import type { HardwareView, VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import {
  bootList,
  controlState,
  move,
  pendingFor,
  RUN_STRATEGY_TEXT,
  runStrategyProblem,
  sameOrder,
} from '../../lib/vm-hardware';
import { VmSchedules } from '../schedules/VmSchedules';
import { ActionDialog } from './ActionDialog';
import { ControlButton, PanelError, PendingNote, useHardware } from './HardwareTab';
import { WhyHint } from './SnapshotsTab';
import type { VmTabProps } from './tabs';
import { vmRef } from '../../lib/cluster-links';

const RUN_STRATEGIES = ['Always', 'RerunOnFailure', 'Once', 'Manual', 'Halted'] as const;
type RunStrategy = (typeof RUN_STRATEGIES)[number];

type Dialog = 'start' | 'firmware' | 'boot' | 'description';

type SetOptions = {
  runStrategy?: RunStrategy;
  firmware?: 'bios' | 'uefi';
  secureBoot?: boolean;
  bootOrder?: string[];
  description?: string;
};

export function OptionsTab({ vm, readOnly }: VmTabProps) {
  const hw = useHardware(vm);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const close = () => setDialog(null);
  const data = hw.data;
  if (hw.isError) return <PanelError>Options unavailable: {hw.error.message}</PanelError>;
  if (!data) return <div className="skeleton">Loading options…</div>;
  const { options } = data;
  const firmwarePending = pendingFor(data.pending, 'firmware');
  const bootPending = pendingFor(data.pending, 'bootOrder');
  const firmware = controlState(data.controls.firmware);
  const boot = controlState(data.controls.bootOrder);
  const always = { enabled: true, reason: '' };
  const edit = (what: Dialog, state = always, title = 'Edit') =>
    readOnly ? undefined : (
      <td className="row-actions">
        <div className="row-actions-inner">
          <ControlButton label="Edit" state={state} title={title} onClick={() => setDialog(what)} />
          <WhyHint state={state} />
        </div>
      </td>
    );

  return (
    <>
      <section className="panel" aria-labelledby="options-title">
        <div className="panel-head">
          <h2 id="options-title">Options</h2>
          <span className="page-sub">
            {firmwarePending || bootPending ? 'pending changes apply at the next restart' : ''}
          </span>
        </div>
        <div className="table-scroll">
          <table className="data-table hw-table" data-testid="options-table">
            <tbody>
              <tr data-testid="opt-start">
                <th scope="row">Start on boot</th>
                <td className="hw-value">
                  {options.startOnBoot ? 'Yes' : 'No'}{' '}
                  <span className="page-sub">
                    (run strategy <span className="mono">{options.runStrategy}</span>)
                  </span>
                </td>
                {edit('start', always, `Change the run strategy of ${vm.name}`)}
              </tr>
              <tr data-testid="opt-firmware" className={firmwarePending ? 'row-pending' : undefined}>
                <th scope="row">Firmware</th>
                <td className="hw-value">
                  {options.firmware === 'uefi' ? 'UEFI (OVMF)' : 'BIOS (SeaBIOS)'}
                  {options.firmware === 'uefi' && (
                    <span className="page-sub"> · secure boot {options.secureBoot ? 'on' : 'off'}</span>
                  )}
                  <PendingNote change={firmwarePending} testId="opt-firmware-pending" />
                </td>
                {edit('firmware', firmware, `Change the firmware of ${vm.name}`)}
              </tr>
              <tr data-testid="opt-boot" className={bootPending ? 'row-pending' : undefined}>
                <th scope="row">Boot order</th>
                <td className="hw-value mono">
                  {options.bootOrder.length ? options.bootOrder.join(', ') : <span className="page-sub">default</span>}
                  <PendingNote change={bootPending} testId="opt-boot-pending" />
                </td>
                {edit('boot', boot, `Change the boot order of ${vm.name}`)}
              </tr>
              <tr data-testid="opt-description">
                <th scope="row">Description</th>
                <td className="hw-value hw-desc">{options.description || <span className="page-sub">none</span>}</td>
                {edit('description', always, `Change the description of ${vm.name}`)}
              </tr>
            </tbody>
          </table>
        </div>
        {!readOnly && (
          <>
            <StartDialog vm={vm} hw={data} open={dialog === 'start'} onClose={close} />
            <FirmwareDialog vm={vm} hw={data} open={dialog === 'firmware'} onClose={close} />
            <BootOrderDialog vm={vm} hw={data} open={dialog === 'boot'} onClose={close} />
            <DescriptionDialog vm={vm} hw={data} open={dialog === 'description'} onClose={close} />
          </>
        )}
      </section>
      <VmSchedules vm={vm} readOnly={readOnly} />
    </>
  );
}

/** A Modal with a form that sends one `hardware.setOptions` and closes when it is done. */
function OptionsDialog({
  vm,
  title,
  open,
  onClose,
  change,
  problem,
  children,
}: {
  vm: VmRow;
  title: string;
  open: boolean;
  onClose: () => void;
  change: SetOptions | null;
  problem: string | null;
  children: ReactNode;
}) {
  const trpc = useTRPC();
  const set = useMutation(trpc.hardware.setOptions.mutationOptions({ onSuccess: () => close() }));
  const close = () => {
    set.reset();
    onClose();
  };
  const why = problem ?? (change ? null : 'nothing changed');
  return (
    <ActionDialog
      title={title}
      open={open}
      onClose={close}
      label="Save"
      busyLabel="Saving…"
      busy={set.isPending}
      error={set.error}
      problem={why}
      form={{
        id: 'options-form',
        onSubmit: () => {
          if (why || !change) return;
          set.mutate({ ...vmRef(vm), ...change });
        },
      }}
    >
      {children}
    </ActionDialog>
  );
}

interface EditProps {
  vm: VmRow;
  hw: HardwareView;
  open: boolean;
  onClose: () => void;
}

function StartDialog({ vm, hw, open, onClose }: EditProps) {
  const current = hw.options.runStrategy;
  const [value, setValue] = useState(current);
  useEffect(() => {
    if (open) setValue(current);
  }, [open]);
  const problem = runStrategyProblem(value, current, hw.running);
  return (
    <OptionsDialog
      vm={vm}
      title={`Start on boot: ${vm.name}`}
      open={open}
      onClose={onClose}
      change={value !== current ? { runStrategy: value as RunStrategy } : null}
      problem={problem}
    >
      <fieldset className="radio-group">
        <legend className="field-label">Run strategy</legend>
        {RUN_STRATEGIES.map((s) => {
          const why = runStrategyProblem(s, current, hw.running);
          return (
            <label key={s} className="check" title={why ?? undefined}>
              <input
                type="radio"
                name="run-strategy"
                value={s}
                checked={value === s}
                disabled={why !== null}
                onChange={() => setValue(s)}
              />
              <span>
                {RUN_STRATEGY_TEXT[s] ?? s}
                {why && <span className="menu-why"> — {why}</span>}
              </span>
            </label>
          );
        })}
      </fieldset>
      <p className="page-sub" style={{ margin: 0 }}>
        Applies at once. Start on boot means KubeVirt keeps the VM running (it restarts it after a node reboot).
      </p>
    </OptionsDialog>
  );
}

function FirmwareDialog({ vm, hw, open, onClose }: EditProps) {
  const [firmware, setFirmware] = useState(hw.options.firmware);
  const [secureBoot, setSecureBoot] = useState(hw.options.secureBoot);
  useEffect(() => {
    if (!open) return;
    setFirmware(hw.options.firmware);
    setSecureBoot(hw.options.secureBoot);
  }, [open]);
  const sb = firmware === 'uefi' && secureBoot;
  const changed = firmware !== hw.options.firmware || sb !== (hw.options.firmware === 'uefi' && hw.options.secureBoot);
  return (
    <OptionsDialog
      vm={vm}
      title={`Firmware of ${vm.name}`}
      open={open}
      onClose={onClose}
      change={changed ? { firmware, secureBoot: sb } : null}
      problem={null}
    >
      <fieldset className="radio-group">
        <legend className="field-label">Firmware</legend>
        <label className="check">
          <input type="radio" name="firmware" checked={firmware === 'bios'} onChange={() => setFirmware('bios')} />
          BIOS (SeaBIOS)
        </label>
        <label className="check">
          <input type="radio" name="firmware" checked={firmware === 'uefi'} onChange={() => setFirmware('uefi')} />
          UEFI (OVMF)
        </label>
      </fieldset>
      <label className="check" title={firmware === 'uefi' ? undefined : 'needs UEFI'}>
        <input
          type="checkbox"
          checked={sb}
          disabled={firmware !== 'uefi'}
          onChange={(e) => setSecureBoot(e.target.checked)}
        />
        <span>Secure boot {firmware !== 'uefi' && <span className="page-sub">(needs UEFI)</span>}</span>
      </label>
      {hw.running && (
        <p className="pending-note" style={{ margin: 0 }}>
          The VM runs: the change is saved now and applies at its next restart.
        </p>
      )}
    </OptionsDialog>
  );
}

function BootOrderDialog({ vm, hw, open, onClose }: EditProps) {
  const devices = [...hw.disks.map((d) => d.name), ...hw.nics.map((n) => n.name)];
  const kinds = new Map<string, string>([
    ...hw.disks.map((d) => [d.name, d.device === 'cdrom' ? 'CD/DVD' : `disk · ${d.claim || d.kind}`] as const),
    ...hw.nics.map((n) => [n.name, `NIC · ${n.network}`] as const),
  ]);
  const [list, setList] = useState(() => bootList(hw.options.bootOrder, devices));
  useEffect(() => {
    if (open) setList(bootList(hw.options.bootOrder, devices));
  }, [open]);
  const order = list.filter((x) => x.enabled).map((x) => x.name);
  const changed = !sameOrder(order, hw.options.bootOrder);
  return (
    <OptionsDialog
      vm={vm}
      title={`Boot order of ${vm.name}`}
      open={open}
      onClose={onClose}
      change={changed ? { bootOrder: order } : null}
      problem={null}
    >
      <p className="page-sub" style={{ margin: 0 }}>
        Ticked devices boot in this order, first tried first. None ticked: the firmware&apos;s default.
      </p>
      <ol className="boot-list" data-testid="boot-list">
        {list.map((item, i) => (
          <li key={item.name} data-device={item.name}>
            <input
              type="checkbox"
              aria-label={`Boot from ${item.name}`}
              checked={item.enabled}
              onChange={(e) =>
                setList(list.map((x) => (x.name === item.name ? { ...x, enabled: e.target.checked } : x)))
              }
            />
            <span className="grow">
              <span className="mono">{item.name}</span> <span className="page-sub">{kinds.get(item.name)}</span>
            </span>
            <button
              type="button"
              className="btn-small"
              aria-label={`Move ${item.name} up`}
              disabled={i === 0}
              onClick={() => setList(move(list, i, -1))}
            >
              ↑
            </button>
            <button
              type="button"
              className="btn-small"
              aria-label={`Move ${item.name} down`}
              disabled={i === list.length - 1}
              onClick={() => setList(move(list, i, 1))}
            >
              ↓
            </button>
          </li>
        ))}
      </ol>
      {hw.running && (
        <p className="pending-note" style={{ margin: 0 }}>
          The VM runs: the new order is saved now and applies at its next restart.
        </p>
      )}
    </OptionsDialog>
  );
}

const DESCRIPTION_MAX = 8192;

function DescriptionDialog({ vm, hw, open, onClose }: EditProps) {
  const [text, setText] = useState(hw.options.description);
  useEffect(() => {
    if (open) setText(hw.options.description);
  }, [open]);
  const bytes = new TextEncoder().encode(text).length;
  const problem = bytes > DESCRIPTION_MAX ? `at most 8 KiB (this is ${bytes} bytes)` : null;
  return (
    <OptionsDialog
      vm={vm}
      title={`Description of ${vm.name}`}
      open={open}
      onClose={onClose}
      change={text !== hw.options.description ? { description: text } : null}
      problem={problem}
    >
      <div className="field">
        <label htmlFor="vm-description">Description</label>
        <textarea
          id="vm-description"
          rows={5}
          value={text}
          placeholder="Notes for whoever looks after this VM"
          onChange={(e) => setText(e.target.value)}
          aria-invalid={problem ? true : undefined}
        />
        <span className={problem ? 'field-error' : 'field-hint'}>{problem ?? 'Empty removes it. At most 8 KiB.'}</span>
      </div>
    </OptionsDialog>
  );
}
