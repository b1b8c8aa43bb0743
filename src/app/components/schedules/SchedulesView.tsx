'use client';
// Datacenter → Schedules: every snapshot and power schedule (CronJobs in Corral's namespace) with its next and last
// run; admins add, edit, run now and delete. A schedule type needs its extension (snapshot-schedules,
// power-schedules): while neither is installed the page says so and links to Extensions.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import type { ScheduleRow } from '@/server/schemas/schedules';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { ScheduleDialog } from './ScheduleDialog';
import { ScheduleTable, useScheduleRefresh } from './ScheduleTable';
import './schedules.css';

/** Which schedule extensions are installed (from the extension catalog). */
export function useScheduleExtensions() {
  const trpc = useTRPC();
  const ext = useQuery(trpc.extensions.list.queryOptions());
  const installed = (name: string) => ext.data?.some((e) => e.name === name && e.installed) ?? false;
  return {
    loaded: ext.data !== undefined,
    installed: { snapshot: installed('snapshot-schedules'), power: installed('power-schedules') },
  };
}

export function SchedulesView() {
  const trpc = useTRPC();
  const session = useSession();
  const list = useQuery(trpc.schedules.list.queryOptions());
  const refresh = useScheduleRefresh();
  const ext = useScheduleExtensions();
  const [dialog, setDialog] = useState<{ editing?: ScheduleRow } | null>(null);
  const rows = list.data ?? [];
  const none = ext.loaded && !ext.installed.snapshot && !ext.installed.power;

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Schedules</h1>
        <span className="page-sub">
          {list.data
            ? `${rows.length} schedule${rows.length === 1 ? '' : 's'} · ${rows.filter((r) => r.enabled).length} enabled`
            : 'Reading the schedules…'}
        </span>
        <span className="header-spacer" />
        {!session.readOnly && (
          <button
            type="button"
            className="btn btn-primary"
            disabled={none}
            title={none ? 'Install snapshot-schedules or power-schedules first' : undefined}
            onClick={() => setDialog({})}
          >
            Add schedule
          </button>
        )}
      </div>
      {none && (
        <div className="banner banner-info sched-banner" data-testid="schedules-need-extension">
          <span className="grow">
            Schedules run as CronJobs in the cluster. Install the <strong>snapshot-schedules</strong> or{' '}
            <strong>power-schedules</strong> extension first.
          </span>
          <Link className="btn" href="/extensions">
            Extensions
          </Link>
        </div>
      )}
      {list.isError && <div className="inline-error">Could not read the schedules: {list.error.message}</div>}
      {list.data && rows.length === 0 && !none && (
        <p className="page-sub sched-empty">
          No schedules yet. A snapshot schedule such as &quot;nightly, keep 7&quot; is the equivalent of a Proxmox
          backup job; a power schedule starts or stops VMs by tag.
        </p>
      )}
      {rows.length > 0 && (
        <section className="panel">
          <ScheduleTable rows={rows} readOnly={session.readOnly} onEdit={(row) => setDialog({ editing: row })} />
        </section>
      )}
      <ScheduleDialog
        open={dialog !== null}
        onClose={() => setDialog(null)}
        onSaved={() => void refresh()}
        installed={ext.installed}
        {...(dialog?.editing ? { editing: dialog.editing } : {})}
      />
    </div>
  );
}
