'use client';
// The VM toolbar's More ▾ menu: Clone, Convert to template / Unmark template, Export disk, Move to another cluster.
// A disabled item says why in its title and, visibly, under its label (menus have room, and a phone has no hover).
import Link from 'next/link';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTasks } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import type { ActionState } from '../../lib/status';
import {
  cloneState,
  EXPORT_FORMATS,
  exportState,
  exportUrl,
  templateState,
  type ExportFormat,
  type OpsFacts,
} from '../../lib/vm-ops';
import { useBlocker } from '../health/BlockedBy';
import { Modal } from '../Modal';
import { MoveDialog } from '../move/MoveDialog';
import { CloneDialog } from './CloneDialog';
import { TaskProgress } from './SnapshotsTab';
import { TemplateDialog } from './TemplateDialog';

type Dialog = 'clone' | 'template' | 'export' | 'move';

function MenuItem({
  label,
  state,
  title,
  onSelect,
}: {
  label: string;
  state: ActionState;
  title: string;
  onSelect: () => void;
}) {
  return (
    <button
      type="button"
      role="menuitem"
      className="menu-item"
      disabled={!state.enabled}
      title={state.enabled ? title : `${label}: ${state.reason}`}
      onClick={onSelect}
    >
      <span>{label}</span>
      {!state.enabled && <span className="menu-why">{state.reason}</span>}
    </button>
  );
}

/** A menu item opening the Health page at the doctor row that explains a disabled item above it. */
function FixLink({ check, feature, text }: { check: string; feature: string; text: string }) {
  return (
    <Link role="menuitem" className="menu-item" href={`/health#check-${check}`} data-testid={`blocked-${feature}`}>
      <span>{text}</span>
    </Link>
  );
}

export function MoreMenu({ vm, facts }: { vm: VmRow; facts: OpsFacts }) {
  const [open, setOpen] = useState(false);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const menu = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    menu.current?.querySelector<HTMLButtonElement>('[role="menuitem"]:not(:disabled)')?.focus();
    const onDown = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'Escape') {
      setOpen(false);
      wrap.current?.querySelector<HTMLButtonElement>('[aria-haspopup]')?.focus();
      return;
    }
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const items = [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]:not(:disabled)') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    const next = items[(at + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length];
    next?.focus();
  };

  const choose = (d: Dialog) => {
    setOpen(false);
    setDialog(d);
  };
  // A running VM clones through a snapshot: while a doctor check turns snapshots off, the item names it and links.
  const snapshotBlocker = useBlocker('snapshots');
  const cloneBlocker = facts.running && facts.agent ? snapshotBlocker : undefined;
  const clone = cloneBlocker
    ? {
        enabled: false,
        reason: `${cloneBlocker.reason.replace(/:.*$/, '')} (stop the VM to clone it into another namespace)`,
      }
    : cloneState(facts);
  const template = templateState(facts);
  // The VMExport gate off (a failing doctor check): the item says so, and a link opens the check's row.
  const exportBlocker = useBlocker('export');
  const exp = exportBlocker ? { enabled: false, reason: exportBlocker.reason.replace(/:.*$/, '') } : exportState(facts);

  return (
    <div className="menu-wrap" ref={wrap} onKeyDown={onKeyDown}>
      <button
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? 'vm-more-menu' : undefined}
        title="Clone, template, export, move"
        onClick={() => setOpen(!open)}
      >
        More ▾
      </button>
      {open && (
        <div className="menu" role="menu" id="vm-more-menu" aria-label="More VM actions" ref={menu}>
          <MenuItem
            label={vm.template ? 'New VM from template…' : 'Clone…'}
            state={clone}
            title={`A full copy of ${vm.name}`}
            onSelect={() => choose('clone')}
          />
          {cloneBlocker && <FixLink check={cloneBlocker.check} feature="clone" text="Fix cloning on the Health page" />}
          <MenuItem
            label={vm.template ? 'Unmark template' : 'Convert to template'}
            state={template}
            title={vm.template ? `Make ${vm.name} an ordinary VM again` : `Make ${vm.name} a template to clone from`}
            onSelect={() => choose('template')}
          />
          <MenuItem
            label="Export disk…"
            state={exp}
            title={`Download ${vm.name}'s disk image`}
            onSelect={() => choose('export')}
          />
          {exportBlocker && (
            <FixLink check={exportBlocker.check} feature="export" text="Fix disk export on the Health page" />
          )}
          <MenuItem
            label="Move to another cluster…"
            state={{ enabled: true, reason: '' }}
            title={`Stop ${vm.name}, carry its disks to another cluster or namespace and recreate it there`}
            onSelect={() => choose('move')}
          />
        </div>
      )}
      <CloneDialog vm={vm} facts={facts} open={dialog === 'clone'} onClose={() => setDialog(null)} />
      <TemplateDialog vm={vm} open={dialog === 'template'} onClose={() => setDialog(null)} />
      <ExportDialog vm={vm} open={dialog === 'export'} onClose={() => setDialog(null)} />
      {dialog === 'move' && (
        <MoveDialog
          source={{ context: vm.context, namespace: vm.namespace, name: vm.name }}
          open
          onClose={() => setDialog(null)}
        />
      )}
    </div>
  );
}

const EXPORT_ACTIONS = new Set(['export']);

function ExportDialog({ vm, open, onClose }: { vm: VmRow; open: boolean; onClose: () => void }) {
  const [format, setFormat] = useState<ExportFormat>('raw.gz');
  // Export tasks that existed when Download was clicked; the first one after that is this download's.
  const [before, setBefore] = useState<Set<string> | null>(null);
  const target = `${vm.namespace}/${vm.name}`;
  const tasks = useTasks().filter((t) => t.target === target && EXPORT_ACTIONS.has(t.action));
  const task = before ? tasks.find((t) => !before.has(t.id)) : undefined;
  const close = () => {
    setBefore(null);
    onClose();
  };
  return (
    <Modal
      title={`Export the disk of ${vm.name}`}
      open={open}
      onClose={close}
      footer={
        <>
          <button type="button" onClick={close}>
            {before ? 'Close' : 'Cancel'}
          </button>
          <a
            className="btn btn-primary"
            href={exportUrl(vm.namespace, vm.name, format, vm.context)}
            download
            data-testid="export-download"
            onClick={() => setBefore(new Set(tasks.map((t) => t.id)))}
          >
            Download
          </a>
        </>
      }
    >
      <fieldset className="radio-group">
        <legend className="field-label">Format</legend>
        {EXPORT_FORMATS.map((f) => (
          <label key={f.id} className="check">
            <input
              type="radio"
              name="export-format"
              value={f.id}
              checked={format === f.id}
              onChange={() => setFormat(f.id)}
            />
            <span>
              <span className="mono">{f.label}</span> <span className="page-sub">— {f.hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <p className="page-sub" style={{ margin: 0 }}>
        The download starts in the browser and streams the boot disk through a VirtualMachineExport; closing the
        download stops the export.
      </p>
      {before &&
        (task ? (
          <TaskProgress task={task} testId="export-progress" />
        ) : (
          <span className="page-sub">Preparing the export…</span>
        ))}
    </Modal>
  );
}
