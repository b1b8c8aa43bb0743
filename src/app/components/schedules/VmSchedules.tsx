'use client';
// The schedule section of a VM's Options view: the schedules that take in this VM (its own, and those of its tags),
// and "Add schedule" with the VM preset as the target.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import type { ScheduleRow } from '@/server/schemas/schedules';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { ScheduleDialog } from './ScheduleDialog';
import { ScheduleTable, useScheduleRefresh } from './ScheduleTable';
import { useScheduleExtensions } from './SchedulesView';
import './schedules.css';
import { inContext, vmRef } from '../../lib/cluster-links';

export function VmSchedules({ vm, readOnly }: { vm: VmRow; readOnly: boolean }) {
  const trpc = useTRPC();
  const list = useQuery(
    trpc.schedules.list.queryOptions({ namespace: vm.namespace, vm: vm.name, ...inContext(vm.context) }),
  );
  const refresh = useScheduleRefresh();
  const ext = useScheduleExtensions();
  const [dialog, setDialog] = useState<{ editing?: ScheduleRow } | null>(null);
  const none = ext.loaded && !ext.installed.snapshot && !ext.installed.power;
  const rows = list.data ?? [];
  const target = { ...vmRef(vm) };

  return (
    <section className="panel sched-vm" aria-labelledby="vm-schedules-title" data-testid="vm-schedules">
      <div className="panel-head">
        <h2 id="vm-schedules-title">Schedules</h2>
        <span className="page-sub">
          {list.data ? `${rows.length} for this VM (its own and its tags')` : 'Reading the schedules…'}
        </span>
        <span className="header-spacer" />
        {!readOnly &&
          (none ? (
            <Link
              className="btn btn-small"
              href="/extensions"
              title="Schedules need the snapshot-schedules or power-schedules extension"
            >
              Install an extension
            </Link>
          ) : (
            <button type="button" className="btn btn-small" onClick={() => setDialog({})}>
              Add schedule
            </button>
          ))}
      </div>
      <div className="panel-body">
        {list.isError && <div className="inline-error">{list.error.message}</div>}
        {list.data && rows.length === 0 && (
          <p className="page-sub sched-empty">
            {none
              ? 'Snapshot and power schedules need an extension (Datacenter → Extensions).'
              : 'No schedule takes in this VM. Add one, or tag the VM and schedule the tag.'}
          </p>
        )}
        {rows.length > 0 && (
          <ScheduleTable
            rows={rows}
            readOnly={readOnly}
            testId="vm-schedule-table"
            onEdit={(row) => setDialog({ editing: row })}
          />
        )}
      </div>
      {!readOnly && (
        <ScheduleDialog
          open={dialog !== null}
          onClose={() => setDialog(null)}
          onSaved={() => void refresh()}
          installed={ext.installed}
          vm={target}
          {...(dialog?.editing ? { editing: dialog.editing } : {})}
        />
      )}
    </section>
  );
}
