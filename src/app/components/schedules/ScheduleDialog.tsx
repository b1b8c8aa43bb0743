'use client';
// Create or edit a snapshot/power schedule: name and type (on create), when (cron, with presets), which VMs (one VM
// or a tag), keep count or power action, enabled, description. The server validates the same rules (400 naming the
// field; 409 when the type's extension is not installed).
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { ScheduleRow } from '@/server/schemas/schedules';
import { useVms } from '../../lib/live';
import { CRON_PRESETS, emptyForm, formOf, formProblem, targetOf, type ScheduleForm } from '../../lib/schedules';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from '../vm/ActionDialog';

export function ScheduleDialog({
  open,
  onClose,
  onSaved,
  editing,
  vm,
  installed,
}: {
  open: boolean;
  onClose: () => void;
  onSaved: () => void;
  /** The schedule being edited; absent to create one. */
  editing?: ScheduleRow;
  /** Create for this VM (the VM Options view): the target starts as it. */
  vm?: { namespace: string; name: string };
  /** Which extensions are installed, to steer the type. */
  installed: { snapshot: boolean; power: boolean };
}) {
  const trpc = useTRPC();
  const vms = useVms();
  const defaultType = installed.snapshot || !installed.power ? 'snapshot' : 'power';
  const [form, setForm] = useState<ScheduleForm>(() => (editing ? formOf(editing) : emptyForm(defaultType, vm)));
  useEffect(() => {
    if (open) setForm(editing ? formOf(editing) : emptyForm(defaultType, vm));
  }, [open, editing, vm?.namespace, vm?.name]);
  const done = () => {
    onSaved();
    close();
  };
  const create = useMutation(trpc.schedules.create.mutationOptions({ onSuccess: done }));
  const update = useMutation(trpc.schedules.update.mutationOptions({ onSuccess: done }));
  const saving = editing ? update : create;
  const close = () => {
    create.reset();
    update.reset();
    onClose();
  };
  const set = (change: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...change }));
  const problem =
    formProblem(form) ??
    (!editing && !installed[form.type]
      ? `${form.type === 'snapshot' ? 'snapshot-schedules' : 'power-schedules'} is not installed (Extensions)`
      : null);
  const submit = () => {
    if (problem) return;
    const common = {
      cron: form.cron.trim(),
      enabled: form.enabled,
      target: targetOf(form),
      ...(form.type === 'snapshot' ? { keep: Number(form.keep) } : { action: form.action }),
      ...(form.description.trim() ? { description: form.description.trim() } : {}),
    };
    if (editing) update.mutate({ name: editing.name, ...common });
    else create.mutate({ name: form.name, type: form.type, ...common });
  };
  const vmChoices = vms.map((v) => `${v.namespace}/${v.name}`).sort();

  return (
    <ActionDialog
      title={editing ? `Edit schedule ${editing.name}` : vm ? `Add a schedule for ${vm.name}` : 'Add schedule'}
      open={open}
      onClose={close}
      label={editing ? 'Save' : 'Create'}
      busyLabel={editing ? 'Saving…' : 'Creating…'}
      busy={saving.isPending}
      error={saving.error}
      problem={problem}
      form={{ id: 'schedule-form', onSubmit: submit }}
    >
      <div className="sched-form">
        <div className="field">
          <label htmlFor="sched-name">Name</label>
          <input
            id="sched-name"
            value={form.name}
            disabled={!!editing}
            autoComplete="off"
            spellCheck={false}
            placeholder="nightly"
            onChange={(e) => set({ name: e.target.value })}
          />
        </div>
        <fieldset className="radio-group" disabled={!!editing}>
          <legend className="field-label">Type</legend>
          <label className="check">
            <input
              type="radio"
              name="sched-type"
              checked={form.type === 'snapshot'}
              onChange={() => set({ type: 'snapshot' })}
            />
            Snapshot{!installed.snapshot && <span className="page-sub"> (not installed)</span>}
          </label>
          <label className="check">
            <input
              type="radio"
              name="sched-type"
              checked={form.type === 'power'}
              onChange={() => set({ type: 'power' })}
            />
            Power on/off{!installed.power && <span className="page-sub"> (not installed)</span>}
          </label>
        </fieldset>
        <div className="field">
          <label htmlFor="sched-cron">When (cron, UTC)</label>
          <div className="sched-cron">
            <input
              id="sched-cron"
              className="mono"
              value={form.cron}
              spellCheck={false}
              onChange={(e) => set({ cron: e.target.value })}
            />
            <select
              aria-label="Preset"
              value={CRON_PRESETS.some((p) => p.cron === form.cron) ? form.cron : ''}
              onChange={(e) => e.target.value && set({ cron: e.target.value })}
            >
              <option value="">Presets…</option>
              {CRON_PRESETS.map((p) => (
                <option key={p.cron} value={p.cron}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          <span className="field-hint">minute hour day-of-month month day-of-week, or @daily, @hourly</span>
        </div>
        <fieldset className="radio-group">
          <legend className="field-label">Which VMs</legend>
          <label className="check">
            <input
              type="radio"
              name="sched-target"
              checked={form.targetKind === 'tag'}
              onChange={() => set({ targetKind: 'tag' })}
            />
            Every VM with a tag
          </label>
          <label className="check">
            <input
              type="radio"
              name="sched-target"
              checked={form.targetKind === 'vm'}
              onChange={() => set({ targetKind: 'vm' })}
            />
            One VM
          </label>
        </fieldset>
        {form.targetKind === 'tag' ? (
          <div className="field">
            <label htmlFor="sched-tag">Tag</label>
            <input
              id="sched-tag"
              value={form.tag}
              spellCheck={false}
              placeholder="prod"
              onChange={(e) => set({ tag: e.target.value })}
            />
          </div>
        ) : (
          <div className="field">
            <label htmlFor="sched-vm">VM</label>
            <select id="sched-vm" value={form.vm} onChange={(e) => set({ vm: e.target.value })}>
              <option value="">Pick a VM…</option>
              {(vmChoices.includes(form.vm) || !form.vm ? vmChoices : [form.vm, ...vmChoices]).map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </div>
        )}
        {form.type === 'snapshot' ? (
          <div className="field">
            <label htmlFor="sched-keep">Keep (per VM)</label>
            <input
              id="sched-keep"
              inputMode="numeric"
              value={form.keep}
              onChange={(e) => set({ keep: e.target.value })}
            />
            <span className="field-hint">older snapshots this schedule took are deleted; others are never touched</span>
          </div>
        ) : (
          <fieldset className="radio-group">
            <legend className="field-label">Action</legend>
            {(['stop', 'start'] as const).map((a) => (
              <label key={a} className="check">
                <input
                  type="radio"
                  name="sched-action"
                  checked={form.action === a}
                  onChange={() => set({ action: a })}
                />
                {a === 'stop' ? 'Stop' : 'Start'}
              </label>
            ))}
          </fieldset>
        )}
        <label className="check">
          <input type="checkbox" checked={form.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
          Enabled
        </label>
        <div className="field">
          <label htmlFor="sched-desc">Description</label>
          <input id="sched-desc" value={form.description} onChange={(e) => set({ description: e.target.value })} />
        </div>
      </div>
    </ActionDialog>
  );
}
