'use client';
// The Datacenter page: summary cards, fleet charts and top VMs, tag chips, the filterable/sortable table of VMs and
// CTs (a Type column; `type:ct` filters) with bulk Start/Stop/Restart/Delete through bulk.start (progress and
// Cancel while it runs), templates. With several clusters the rows, selection and bulk runs are per cluster: a row's
// key names its cluster, and a selection spanning clusters runs in each guest's own cluster (lib/bulk.ts).
import Link from 'next/link';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { runBulk, type BulkProgress, type BulkResult } from '../../lib/bulk';
import { inContext, vmPageHref, withContext } from '../../lib/cluster-links';
import { rowKey } from '../../lib/fleet-store';
import { bulkTarget, ctGuestCached, vmGuestCached, type GuestRow } from '../../lib/guest-rows';
import { FilterIndex } from '../../lib/filter-index';
import { hasTerm, parseFilter, toggleTerm } from '../../lib/filter-query';
import { useFleet } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useSession } from '../../lib/session';
import { parseQuantity } from '../../lib/quantity';
import type { SortSpec } from '../../lib/sort';
import { useTRPCClient } from '../../lib/trpc';
import { SumCharts } from '../charts/SumCharts';
import { TopVms } from '../charts/TopVms';
import { StatusDot } from '../StatusDot';
import { ActionDialog } from '../vm/ActionDialog';
import { TemplateDialog } from '../vm/TemplateDialog';
import { useSortedVms, VmTable, type VmSortKey } from '../VmTable';

type BulkAction = 'start' | 'stop' | 'restart' | 'delete';

/** How long typing must pause before `?q=` is rewritten. */
const URL_WRITE_DELAY_MS = 250;

/**
 * Reads and writes `?q=` so a filtered view can be linked and survives reload. The URL is written once typing
 * pauses: Next turns each replaceState into a router update, about 8 ms of every keystroke in a CPU profile at
 * 20,000 VMs.
 */
function useUrlQuery(): [string, (q: string) => void] {
  const [q, setQ] = useState('');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    setQ(new URLSearchParams(window.location.search).get('q') ?? '');
    return () => clearTimeout(timer.current);
  }, []);
  const update = useCallback((next: string) => {
    setQ(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const url = new URL(window.location.href);
      if (next) url.searchParams.set('q', next);
      else url.searchParams.delete('q');
      window.history.replaceState(window.history.state, '', url);
    }, URL_WRITE_DELAY_MS);
  }, []);
  return [q, update];
}

export function DatacenterView() {
  const { state, version, synced } = useFleet();
  const session = useSession();
  const client = useTRPCClient();
  const [query, setQuery] = useUrlQuery();
  const [sort, setSort] = useState<SortSpec<VmSortKey>>({ key: 'name', dir: 'asc' });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<{ action: BulkAction; rows: BulkResult[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<(BulkProgress & { action: BulkAction }) | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const stopRef = useRef(false);
  const [unmark, setUnmark] = useState<VmRow | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const filter = useMemo(() => parseFilter(query), [query]);

  const all = state.vms.list();
  const allCts = state.cts.list();
  const { vms, guests, byKey, templates, tags, running, ctsRunning } = useMemo(() => {
    void version;
    const vms: VmRow[] = [];
    const guests: GuestRow[] = [];
    const templates: VmRow[] = [];
    const tags = new Map<string, number>();
    let running = 0;
    for (const vm of all) {
      if (vm.template) {
        templates.push(vm);
        continue;
      }
      vms.push(vm);
      guests.push(vmGuestCached(vm, state.defaultContext));
      if (vm.status === 'Running') running++;
      for (const t of vm.tags) tags.set(t, (tags.get(t) ?? 0) + 1);
    }
    let ctsRunning = 0;
    for (const ct of allCts) {
      guests.push(ctGuestCached(ct, state.defaultContext));
      if (ct.phase === 'Running') ctsRunning++;
    }
    return {
      vms,
      guests,
      byKey: new Map(guests.map((g) => [g.key, g])),
      templates,
      tags: [...tags.entries()].sort((a, b) => a[0].localeCompare(b[0])),
      running,
      ctsRunning,
    };
  }, [all, allCts, version]);
  // Sorted once per change of the fleet or the sort, then filtered (which keeps the order): a keystroke costs only
  // the filter, which the index answers within a frame at 50,000 rows (lib/filter-index.ts, docs/scale.md).
  const sorted = useSortedVms(guests, sort);
  const index = useMemo(() => new FilterIndex(sorted), [sorted]);
  const rows = useMemo(() => index.filter(filter), [index, filter]);
  const nodes = state.nodes.list();
  const readyNodes = nodes.filter((n) => n.ready).length;
  const capacity = nodes.reduce(
    (sum, n) => (n.ready ? { cpus: sum.cpus + n.cpu, memBytes: sum.memBytes + (parseQuantity(n.memory) ?? 0) } : sum),
    { cpus: 0, memBytes: 0 },
  );

  // The same element while the capacity stays: a keystroke in the filter does not re-render the charts.
  const { cpus, memBytes } = capacity;
  const charts = useMemo(
    () => (
      <>
        <SumCharts title="Fleet usage" capacity={{ cpus, memBytes }} />
        <div className="grid-2">
          <TopVms by="cpu" />
          <TopVms by="mem" />
        </div>
      </>
    ),
    [cpus, memBytes],
  );

  // Selection only ever refers to rows that still exist.
  useEffect(() => {
    setSelected((s) => {
      const keep = new Set([...s].filter((k) => byKey.has(k)));
      return keep.size === s.size ? s : keep;
    });
  }, [byKey]);

  const bulk = async (action: BulkAction) => {
    const targets = [...selected]
      .map((k) => byKey.get(k))
      .filter((g): g is GuestRow => g !== undefined)
      .map(bulkTarget);
    setBusy(true);
    setConfirmDelete(false);
    stopRef.current = false;
    setCancelling(false);
    setProgress({ action, task: '', finished: 0, total: targets.length });
    const rows = await runBulk(
      targets,
      {
        start: (chunk, context) => client.bulk.start.mutate({ action, targets: chunk, ...inContext(context) }),
        get: (task, context) => client.bulk.get.query({ task, ...inContext(context) }),
      },
      (p) => setProgress({ ...p, action }),
      () => stopRef.current,
      500,
      state.defaultContext,
    );
    setBusy(false);
    setProgress(null);
    setConfirmDelete(false);
    setResults({ action, rows });
    setSelected(new Set());
  };

  /** Cancel: the server stops sending the current run's rest, and later chunks are not started. */
  const cancelBulk = () => {
    stopRef.current = true;
    setCancelling(true);
    if (progress?.task)
      void client.bulk.cancel.mutate({ task: progress.task, ...inContext(progress.context) }).catch(() => undefined);
  };

  if (!synced) return <div className="skeleton workbench">Loading the fleet…</div>;

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Datacenter</h1>
        <span className="page-sub">{state.cluster}</span>
      </div>
      <div className="cards">
        <div className="card">
          <div className="card-label">VMs</div>
          <div className="card-value" data-testid="card-vms">
            {vms.length}
          </div>
        </div>
        <div className="card">
          <div className="card-label">Running</div>
          <div className="card-value" data-testid="card-running">
            {running} <small>/ {vms.length}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">CTs running</div>
          <div className="card-value" data-testid="card-cts">
            {ctsRunning} <small>/ {allCts.length}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">Nodes ready</div>
          <div className="card-value">
            {readyNodes} <small>/ {nodes.length}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">Templates</div>
          <div className="card-value">{templates.length}</div>
        </div>
      </div>

      {charts}

      {all.length === 0 && allCts.length === 0 ? (
        <div className="panel empty" data-testid="empty-state">
          <h2>No VMs or containers yet</h2>
          <p>
            Create a VM from the catalog, a container disk, an ISO or an existing disk, or a container (CT) from an
            image.
          </p>
          {!session.readOnly && (
            <Link href="/create" className="btn btn-primary">
              + Create VM
            </Link>
          )}
        </div>
      ) : (
        <section className="panel" aria-labelledby="vms-title">
          <div className="panel-head">
            <h2 id="vms-title">Virtual machines and containers</h2>
            <span className="page-sub" data-testid="shown-count">
              {rows.length === guests.length ? `${guests.length}` : `${rows.length} of ${guests.length}`}
            </span>
            <input
              type="search"
              className="filter-input"
              aria-label="Filter VMs"
              placeholder="Filter: text, type:ct, tag:prod, status:running, node:n1, ns:tailvm (-tag:x excludes)"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              data-testid="vm-filter"
            />
            {filter.problems.length > 0 && <div className="filter-problems">{filter.problems.join(' · ')}</div>}
            {tags.length > 0 && (
              <div className="chips" aria-label="Tags">
                {tags.map(([tag, count]) => (
                  <button
                    key={tag}
                    type="button"
                    className="chip"
                    aria-pressed={hasTerm(query, 'tag', tag)}
                    onClick={() => setQuery(toggleTerm(query, 'tag', tag))}
                  >
                    {tag} <span className="page-sub">{count}</span>
                  </button>
                ))}
              </div>
            )}
            {!session.readOnly && (
              <div className="bulk-bar" data-testid="bulk-bar">
                <span className="page-sub">{selected.size} selected</span>
                {(['start', 'stop', 'restart'] as const).map((a) => (
                  <button
                    key={a}
                    type="button"
                    className="btn-small"
                    disabled={selected.size === 0 || busy}
                    title={selected.size === 0 ? 'Select guests in the table first' : `${a} ${selected.size} selected`}
                    onClick={() => void bulk(a)}
                  >
                    {a[0]?.toUpperCase() + a.slice(1)}
                  </button>
                ))}
                <button
                  type="button"
                  className="btn-small btn-danger"
                  disabled={selected.size === 0 || busy}
                  title={selected.size === 0 ? 'Select guests in the table first' : `Delete ${selected.size} selected`}
                  onClick={() => setConfirmDelete(true)}
                >
                  Delete
                </button>
                {progress && (
                  <span className="bulk-progress" role="status" data-testid="bulk-progress">
                    <progress
                      max={progress.total}
                      value={progress.finished}
                      aria-label={`${progress.action} progress`}
                    />
                    <span className="page-sub">
                      {progress.action} {progress.finished} / {progress.total}
                    </span>
                    <button
                      type="button"
                      className="btn-small btn-ghost"
                      disabled={cancelling || !progress.task}
                      onClick={cancelBulk}
                    >
                      {cancelling ? 'Cancelling…' : 'Cancel the rest'}
                    </button>
                  </span>
                )}
              </div>
            )}
          </div>
          {rows.length === 0 ? (
            <div className="empty">
              <h2>Nothing matches</h2>
              <p>No VM or CT matches “{query}”.</p>
              <button type="button" onClick={() => setQuery('')}>
                Clear the filter
              </button>
            </div>
          ) : (
            <VmTable
              rows={rows}
              sort={sort}
              onSort={setSort}
              selected={selected}
              onSelect={setSelected}
              selectable={!session.readOnly}
              onTagClick={(t) => setQuery(toggleTerm(query, 'tag', t))}
              showType
            />
          )}
          {results && (
            <div role="status" data-testid="bulk-results">
              <div className="panel-head">
                <h2>
                  {results.action}: {results.rows.filter((r) => r.ok).length} ok,{' '}
                  {results.rows.filter((r) => !r.ok).length} failed
                </h2>
                <button type="button" className="btn-small btn-ghost" onClick={() => setResults(null)}>
                  Dismiss
                </button>
              </div>
              <ul className="results">
                {results.rows.map((r) => (
                  <li key={r.key} data-result={r.key}>
                    <span className={r.ok ? 'result-ok' : 'result-err'}>{r.ok ? '✓' : '✗'}</span>
                    <span className="page-sub">{r.type.toUpperCase()}</span>
                    <span className="mono">
                      {r.cluster && `${r.cluster}: `}
                      {r.namespace}/{r.name}
                    </span>
                    <span className={r.ok ? 'page-sub' : 'result-err'}>{r.message}</span>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </section>
      )}

      {templates.length > 0 && (
        <section className="panel" aria-labelledby="tpl-title">
          <div className="panel-head">
            <h2 id="tpl-title">Templates</h2>
          </div>
          <ul className="results" style={{ borderTop: 0 }}>
            {templates.map((t) => (
              <li key={rowKey(t, state.defaultContext)} data-template={rowKey(t, state.defaultContext)}>
                <StatusDot status={t.status} />
                <Link href={vmPageHref(t, state.defaultContext)}>{t.name}</Link>
                <span className="page-sub">
                  {t.namespace} · {t.cpu || '—'} vCPU · {t.mem || 'instancetype'}
                </span>
                {!session.readOnly && (
                  <span className="tpl-actions">
                    <Link
                      className="btn btn-small"
                      href={withContext(
                        `/create?template=${encodeURIComponent(`${t.namespace}/${t.name}`)}`,
                        t.context,
                        state.defaultContext,
                      )}
                      title={`Create a VM as a full clone of ${t.name}`}
                    >
                      Create VM from template
                    </Link>
                    <button
                      type="button"
                      className="btn-small"
                      title={`Make ${t.name} an ordinary VM again`}
                      onClick={() => setUnmark(t)}
                    >
                      Unmark
                    </button>
                  </span>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {unmark && <TemplateDialog vm={unmark} open onClose={() => setUnmark(null)} />}
      <ActionDialog
        title={`Delete ${selected.size} selected`}
        open={confirmDelete}
        onClose={() => setConfirmDelete(false)}
        label="Delete"
        busyLabel="Deleting…"
        busy={busy}
        error={null}
        danger
        onConfirm={() => void bulk('delete')}
      >
        <p style={{ margin: 0 }}>
          This deletes every selected VM with everything created for it (disks, snapshots, Secrets) and every selected
          CT with its pod and data volume. Their data is gone for good.
        </p>
        <ul className="results" data-testid="bulk-delete-list">
          {[...selected]
            .map((k) => byKey.get(k))
            .filter((g): g is GuestRow => g !== undefined)
            .slice(0, 20)
            .map((g) => (
              <li key={g.key}>
                <span className="page-sub">{g.type.toUpperCase()}</span>{' '}
                <span className="mono">
                  {g.cluster && `${g.cluster}: `}
                  {g.namespace}/{g.name}
                </span>
              </li>
            ))}
          {selected.size > 20 && <li className="page-sub">and {selected.size - 20} more</li>}
        </ul>
      </ActionDialog>
    </div>
  );
}
