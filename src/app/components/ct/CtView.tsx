'use client';
// The CT page: header with status, the toolbar (Start/Stop/Restart/Delete, hidden for read-only callers) and the
// Summary, Terminal and YAML tabs. The row is pushed by the live stream (a Stop/Start shows without reload or
// polling); the YAML tab's stored objects are read from cts.get when the row changes.
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, useRouter, useSearchParams } from 'next/navigation';
import { Fragment, useMemo, useState } from 'react';
import { useDefaultContext, useFleet, useTask } from '../../lib/live';
import { ctDiskUsage } from '../../lib/ct-usage';
import { usageLevel } from '../../lib/vm-observe';
import type { CtRow } from '../../lib/model';
import { toRedactedYaml } from '../../lib/redact';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { StatusDot } from '../StatusDot';
import { MoveDialog } from '../move/MoveDialog';
import { ActionDialog } from '../vm/ActionDialog';
import { TaskProgress } from '../vm/SnapshotsTab';
import '../vm/observe/observe.css';
import { CtTerminal } from './CtTerminal';
import { ctStatus, useCtObjects, useCtRow } from './use-cts';
import { contextOfSearch, ctPageHref, vmRef } from '../../lib/cluster-links';

const TABS = [
  { id: 'summary', label: 'Summary' },
  { id: 'terminal', label: 'Terminal' },
  { id: 'yaml', label: 'YAML' },
] as const;

export function CtView() {
  const params = useParams<{ ns: string; name: string }>();
  const namespace = decodeURIComponent(params.ns);
  const name = decodeURIComponent(params.name);
  const search = useSearchParams();
  const session = useSession();
  const { synced } = useFleet();
  // `?context=lab`: a CT of another cluster than the default (docs/multi-cluster.md).
  const context = contextOfSearch(search);
  const defaultContext = useDefaultContext();
  const row = useCtRow(namespace, name, context);
  if (!row) {
    return (
      <div className="workbench">
        {synced ? (
          <div className="panel empty" data-testid="ct-missing">
            <h2>
              No CT {namespace}/{name}
            </h2>
            <p>
              There is no container {name} in namespace {namespace}: it was deleted, or its data volume{' '}
              <code>{name}-data</code> is not labelled as a CT.
            </p>
            <Link href="/" className="btn">
              Back to Datacenter
            </Link>
          </div>
        ) : (
          <div className="skeleton">Loading…</div>
        )}
      </div>
    );
  }
  const tab = TABS.find((t) => t.id === search.get('tab')) ?? TABS[0];
  return (
    <div className="workbench">
      <div className="page-head">
        <h1>
          <span className="icon" aria-hidden title="Container">
            ⬡
          </span>{' '}
          <StatusDot status={ctStatus(row)} />
          {row.name}
        </h1>
        <span className="page-sub" data-testid="ct-status">
          CT · {defaultContext && row.context ? `${row.context} · ` : ''}
          {row.namespace} · {row.phase}
          {row.node ? ` on ${row.node}` : ''}
        </span>
        <span className="header-spacer" />
        {!session.readOnly && <CtToolbar ct={row} />}
      </div>
      <div className="tabs" role="tablist" aria-label="CT views">
        {TABS.map((t) => (
          <Link
            key={t.id}
            role="tab"
            href={ctPageHref({ namespace, name, context }, defaultContext, t.id)}
            aria-selected={t.id === tab.id}
            replace
            scroll={false}
          >
            {t.label}
          </Link>
        ))}
      </div>
      <div role="tabpanel" aria-label={tab.label}>
        {tab.id === 'summary' && <CtSummary ct={row} />}
        {tab.id === 'terminal' && <CtTerminal ct={row} readOnly={session.readOnly} />}
        {tab.id === 'yaml' && <CtYaml ct={row} />}
      </div>
    </div>
  );
}

function CtToolbar({ ct }: { ct: CtRow }) {
  const trpc = useTRPC();
  const act = useMutation(trpc.cts.action.mutationOptions());
  const task = useTask(act.data?.task ?? null);
  const [deleting, setDeleting] = useState(false);
  const [moving, setMoving] = useState(false);
  const running = ct.phase !== 'Stopped' && ct.phase !== 'Stopping';
  const buttons = [
    { action: 'start', label: 'Start', enabled: ct.phase === 'Stopped', why: `CT is ${ct.phase}` },
    { action: 'stop', label: 'Stop', enabled: running, why: `CT is ${ct.phase}` },
    { action: 'restart', label: 'Restart', enabled: running, why: `CT is ${ct.phase}` },
  ] as const;
  return (
    <div className="toolbar" role="toolbar" aria-label="CT actions" data-testid="ct-toolbar">
      {buttons.map(({ action, label, enabled, why }) => (
        <button
          key={action}
          type="button"
          disabled={!enabled || act.isPending}
          title={enabled ? `${label} ${ct.name}` : `${label}: ${why}`}
          onClick={() => act.mutate({ ...vmRef(ct), action })}
        >
          {act.isPending && act.variables.action === action ? `${label}…` : label}
        </button>
      ))}
      <span className="sep" aria-hidden />
      <button
        type="button"
        title={`Stop ${ct.name}, carry its volume to another cluster or namespace and start it there`}
        onClick={() => setMoving(true)}
      >
        Move to another cluster…
      </button>
      <button type="button" className="btn-danger" onClick={() => setDeleting(true)}>
        Delete
      </button>
      {act.error && (
        <span className="field-error" role="alert" style={{ flexBasis: '100%' }}>
          {act.variables?.action}: {act.error.message}
        </span>
      )}
      {task && task.status !== 'done' && (
        <span style={{ flexBasis: '100%' }}>
          <TaskProgress task={task} testId="ct-task" />
        </span>
      )}
      <DeleteCtDialog ct={ct} open={deleting} onClose={() => setDeleting(false)} />
      {moving && (
        <MoveDialog
          source={{ kind: 'ct', context: ct.context, namespace: ct.namespace, name: ct.name }}
          open
          onClose={() => setMoving(false)}
        />
      )}
    </div>
  );
}

function DeleteCtDialog({ ct, open, onClose }: { ct: CtRow; open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const del = useMutation(
    trpc.cts.delete.mutationOptions({
      onSuccess: () => {
        onClose();
        router.push('/');
      },
    }),
  );
  return (
    <ActionDialog
      title={`Delete CT ${ct.name}`}
      open={open}
      onClose={onClose}
      label="Delete"
      busyLabel="Deleting…"
      busy={del.isPending}
      error={del.error}
      danger
      onConfirm={() => del.mutate(vmRef(ct))}
    >
      <p style={{ margin: 0 }}>
        This deletes the pod <code>{ct.name}</code>, any Service of the CT and its data volume{' '}
        <code>{ct.name}-data</code> ({ct.disk}). Its files are gone for good.
      </p>
    </ActionDialog>
  );
}

function CtSummary({ ct }: { ct: CtRow }) {
  const usage = ctDiskUsage(ct);
  const rows: [string, string][] = [
    ['Status', ct.phase + (ct.ready ? ' (ready)' : '')],
    ['Image', ct.image],
    ['Node', ct.node || '—'],
    ['IP', ct.ip || '—'],
    ['CPU', `${ct.cpu} ${ct.cpu === 1 ? 'core' : 'cores'}`],
    ['Memory', ct.mem],
    ['Privileged', ct.privileged ? 'yes — the root file system lives on the data volume' : 'no — only /data persists'],
    ['Data volume', `${ct.name}-data · ${ct.disk}${ct.storageClass ? ` · ${ct.storageClass}` : ''}`],
    ['Created', ct.createdAt ? new Date(ct.createdAt).toLocaleString() : '—'],
  ];
  return (
    <section className="panel" data-testid="ct-summary">
      <div className="panel-head">
        <h2>Summary</h2>
      </div>
      <div className="panel-body">
        {ct.reason && (
          <div className="inline-error" role="alert">
            {ct.reason}
          </div>
        )}
        <dl className="kv">
          {rows.map(([k, v]) => (
            <Fragment key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </Fragment>
          ))}
          <dt>Volume usage</dt>
          <dd data-testid="ct-disk-usage">
            {usage.text}
            {usage.percent !== null && (
              <div
                className={`usage-bar usage-${usageLevel(usage.percent)}`}
                role="meter"
                aria-label={`${ct.name}-data used`}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={Math.round(usage.percent)}
                style={{ maxWidth: 320, marginTop: 4 }}
              >
                <span style={{ width: `${usage.percent}%` }} />
              </div>
            )}
          </dd>
        </dl>
      </div>
    </section>
  );
}

function CtYaml({ ct }: { ct: CtRow }) {
  const objects = useCtObjects(ct.namespace, ct.name, ct);
  const data = objects.data;
  const yaml = useMemo(
    () => (data ? toRedactedYaml({ pod: data.pod ?? '(none: the CT is stopped)', volume: data.volume }) : ''),
    [data],
  );
  return (
    <section className="panel">
      <div className="panel-head">
        <h2>Pod and data volume of {ct.name}</h2>
        <span className="page-sub">as stored in the cluster</span>
      </div>
      <pre className="yaml mono" data-testid="ct-yaml" tabIndex={0}>
        {yaml}
      </pre>
    </section>
  );
}
