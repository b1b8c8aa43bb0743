'use client';
// Datacenter → Health: the doctor's checks grouped by area, each with its status, message and (for admins) a Fix
// button whose dialog says what will change before it runs; "Fix all" does every fixable row. Rows are anchors
// (#check-<name>) so a disabled control elsewhere can link to the row that explains it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { z } from 'zod';
import type { DoctorCheck, DoctorFixed } from '@/server/schemas/doctor';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from '../vm/ActionDialog';
import './health.css';

type Check = DoctorCheck;
type Fixed = z.infer<typeof DoctorFixed>;

const AREAS: { id: Check['area']; title: string }[] = [
  { id: 'cluster', title: 'Cluster' },
  { id: 'kubevirt', title: 'KubeVirt and CDI' },
  { id: 'storage', title: 'Storage' },
  { id: 'network', title: 'Networking' },
  { id: 'access', title: 'Permissions' },
  { id: 'corral', title: "Corral's own objects" },
];

const ICON = { ok: '✔', warn: '!', fail: '✖' } as const;

export function healthAnchor(check: string): string {
  return `check-${check}`;
}

function StatusIcon({ status }: { status: Check['status'] }) {
  return (
    <span className={`health-icon health-${status}`} role="img" aria-label={status}>
      {ICON[status]}
    </span>
  );
}

export function HealthView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const session = useSession();
  // The page always runs the checks afresh (the header badge reads the server's short cache instead).
  const list = useQuery(trpc.doctor.list.queryOptions({ refresh: true }, { refetchInterval: 30_000 }));
  // What this page just ran is the freshest answer there is: the header badge shows it too, rather than the
  // server's cached one from before a change made behind Corral's back (the KubeVirt CR is not watched).
  useEffect(() => {
    if (list.data) queryClient.setQueryData(trpc.doctor.list.queryKey({ refresh: false }), list.data);
  }, [list.data, queryClient, trpc]);
  const [dialog, setDialog] = useState<{ check?: Check } | null>(null);
  const [result, setResult] = useState<Fixed | null>(null);
  const [hash, setHash] = useState('');
  useEffect(() => {
    const read = () => setHash(window.location.hash.slice(1));
    read();
    window.addEventListener('hashchange', read);
    return () => window.removeEventListener('hashchange', read);
  }, []);
  // Once the rows are drawn, bring the linked one into view.
  useEffect(() => {
    if (hash && list.data) document.getElementById(hash)?.scrollIntoView({ block: 'center' });
  }, [hash, list.data]);

  const fix = useMutation(
    trpc.doctor.fix.mutationOptions({
      onSuccess: async (data) => {
        setResult(data);
        setDialog(null);
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.doctor.list.queryKey() }), // the header badge too
          queryClient.invalidateQueries({ queryKey: trpc.capabilities.queryKey() }),
        ]);
      },
    }),
  );

  const rows = list.data ?? [];
  const fixable = rows.filter((r) => r.fixable);
  const count = (s: Check['status']) => rows.filter((r) => r.status === s).length;
  const canFix = !session.readOnly;
  const target = dialog?.check;
  const planned = target ? [target] : fixable;

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Health</h1>
        <span className="page-sub">
          {list.data
            ? `${count('ok')} ok · ${count('warn')} warning${count('warn') === 1 ? '' : 's'} · ${count('fail')} failing`
            : 'Checking the cluster…'}
        </span>
        <span className="header-spacer" />
        <button type="button" className="btn" disabled={list.isFetching} onClick={() => void list.refetch()}>
          {list.isFetching ? 'Checking…' : 'Check again'}
        </button>
        {canFix && (
          <button
            type="button"
            className="btn btn-primary"
            disabled={fixable.length === 0 || fix.isPending}
            title={fixable.length ? `Fix ${fixable.length} check(s)` : 'Nothing Corral can fix'}
            onClick={() => {
              fix.reset();
              setDialog({});
            }}
          >
            Fix all{fixable.length ? ` (${fixable.length})` : ''}
          </button>
        )}
      </div>
      {list.isError && <div className="inline-error">Could not run the checks: {list.error.message}</div>}
      {result && (
        <div className="panel health-result" role="status" data-testid="health-fixed">
          <div className="panel-body">
            {result.fixed.length === 0 && result.failed.length === 0 && <div>Nothing needed changing.</div>}
            {result.fixed.map((line) => (
              <div key={line}>✔ {line}</div>
            ))}
            {result.failed.map((f) => (
              <div key={f.name} className="inline-error">
                ✖ {f.name}: {f.error}
              </div>
            ))}
          </div>
        </div>
      )}
      {AREAS.map((area) => {
        const inArea = rows.filter((r) => r.area === area.id);
        if (inArea.length === 0) return null;
        return (
          <section key={area.id} className="panel" aria-labelledby={`area-${area.id}`}>
            <div className="panel-head">
              <h2 id={`area-${area.id}`}>{area.title}</h2>
            </div>
            <ul className="health-list">
              {inArea.map((r) => (
                <li
                  key={r.name}
                  id={healthAnchor(r.name)}
                  className={`health-row${hash === healthAnchor(r.name) ? ' health-linked' : ''}`}
                  data-check={r.name}
                  data-status={r.status}
                >
                  <StatusIcon status={r.status} />
                  <div className="health-text">
                    <div className="health-title">
                      <strong>{r.title}</strong> <span className="mono page-sub">{r.name}</span>
                    </div>
                    <div className="health-message">{r.message}</div>
                    {r.details && r.details.length > 0 && (
                      <ul className="health-details">
                        {r.details.map((d) => (
                          <li key={d} className="mono">
                            {d}
                          </li>
                        ))}
                      </ul>
                    )}
                    {r.fixable && r.fix && <div className="page-sub health-fix">Fix: {r.fix}</div>}
                  </div>
                  {canFix && r.fixable && (
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Fix ${r.title}`}
                      disabled={fix.isPending}
                      onClick={() => {
                        fix.reset();
                        setDialog({ check: r });
                      }}
                    >
                      Fix
                    </button>
                  )}
                </li>
              ))}
            </ul>
          </section>
        );
      })}
      <ActionDialog
        title={target ? `Fix: ${target.title}` : 'Fix all'}
        open={dialog !== null}
        onClose={() => setDialog(null)}
        label={target ? 'Fix' : `Fix ${planned.length}`}
        busyLabel="Fixing…"
        busy={fix.isPending}
        error={fix.error}
        problem={planned.length ? null : 'nothing to fix'}
        onConfirm={() => fix.mutate(target ? { name: target.name } : {})}
      >
        <p>This will change the cluster:</p>
        <ul className="health-plan">
          {planned.map((c) => (
            <li key={c.name}>{c.fix}</li>
          ))}
        </ul>
        <p className="page-sub">Each fix runs as a task; its log says exactly what changed.</p>
      </ActionDialog>
    </div>
  );
}
