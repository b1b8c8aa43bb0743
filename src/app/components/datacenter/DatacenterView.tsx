'use client';
// The Datacenter page: summary cards, fleet charts and top VMs, tag chips, the filterable/sortable table of VMs and
// CTs (a Type column; `type:ct` filters) with bulk Start/Stop/Restart/Delete through bulk.start (progress and
// Cancel while it runs), templates. With several clusters the rows, selection and bulk runs are per cluster: a row's
// key names its cluster, and a selection spanning clusters runs in each guest's own cluster (lib/bulk.ts).
// At 50,000 guests: the rows are kept per change (lib/guest-view.ts), and the table follows the filter box once the
// key's frame is painted (lib/after-paint.ts), in a render that gives the filter at most a few milliseconds; a
// filter that needs more goes on in slices between frames (lib/sliced.ts) while the table shows the previous
// answer, marked busy. `data-filtered` names the query whose answer the table shows (docs/scale.md, "Filtering").
import Link from 'next/link';
import { startTransition, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useValueAfterPaint } from '../../lib/after-paint';
import { runBulk, type BulkProgress, type BulkResult } from '../../lib/bulk';
import { inContext, vmPageHref, withContext } from '../../lib/cluster-links';
import { rowKey } from '../../lib/fleet-store';
import { bulkTarget, type GuestRow } from '../../lib/guest-rows';
import { hasTerm, parseFilter, toggleTerm, type ParsedFilter } from '../../lib/filter-query';
import { guestOrder } from '../../lib/guest-order';
import { GuestView } from '../../lib/guest-view';
import { useFleet } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useSession } from '../../lib/session';
import { shownCount } from '../../lib/shown-count';
import { runSliced } from '../../lib/sliced';
import { useTypedBeforeHydration } from '../../lib/typed-early';
import { parseQuantity } from '../../lib/quantity';
import type { SortSpec } from '../../lib/sort';
import { useTRPCClient } from '../../lib/trpc';
import { SumCharts } from '../charts/SumCharts';
import { TopVms } from '../charts/TopVms';
import { StatusDot } from '../StatusDot';
import { ActionDialog } from '../vm/ActionDialog';
import { TemplateDialog } from '../vm/TemplateDialog';
import { sortKindOf, VmTable, type VmSortKey } from '../VmTable';
import { useUrlQuery } from './use-url-query';

type BulkAction = 'start' | 'stop' | 'restart' | 'delete';

/** The text each parsed filter came from: what `data-filtered` says the table shows. */
const filterText = new WeakMap<ParsedFilter, string>();
/** What a render of the table gives the filter before leaving the rest to slices between frames. */
const RENDER_BUDGET_MS = 3;

export function DatacenterView() {
  const { state, synced } = useFleet();
  const session = useSession();
  const client = useTRPCClient();
  const [query, setQuery] = useUrlQuery();
  const filterBox = useTypedBeforeHydration(query, setQuery);
  const [sort, setSort] = useState<SortSpec<VmSortKey>>({ key: 'name', dir: 'asc' });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<{ action: BulkAction; rows: BulkResult[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<(BulkProgress & { action: BulkAction }) | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const stopRef = useRef(false);
  const [unmark, setUnmark] = useState<VmRow | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  // The box shows every keystroke at once; the table follows once that key's frame is painted (lib/after-paint.ts,
  // an interruptible render) and the filter has been answered.
  const deferredQuery = useValueAfterPaint(query);
  const filter = useMemo(() => {
    const parsed = parseFilter(deferredQuery);
    filterText.set(parsed, deferredQuery);
    return parsed;
  }, [deferredQuery]);
  const [, setAnswered] = useState(0);
  const queryRef = useRef(query);
  queryRef.current = query;
  // The same function every render, so the table's rows stay memoized.
  const onTagClick = useCallback((t: string) => setQuery(toggleTerm(queryRef.current, 'tag', t)), [setQuery]);

  const all = state.vms.list();
  const allCts = state.cts.list();
  const viewRef = useRef<GuestView | null>(null);
  viewRef.current ??= new GuestView();
  const view = viewRef.current;
  // O(change): only the rows the store replaced since the last render move (the same lists: nothing to do).
  view.sync(all, allCts, state.defaultContext);
  const stamp = view.stamp;
  // While only the first page is held, the whole list's counts as its server gave them (50,000, not 200).
  const whole = state.partial ? state.partialCounts : undefined;
  const vmCount = whole?.total ?? view.counts.vms;
  const running = whole?.running ?? view.counts.running;
  const { ctsRunning } = view.counts;
  const guestCount = whole ? whole.total + allCts.length : view.size;
  const templates = view.templates();
  const tags = view.tags();
  const order = useMemo(() => guestOrder(sort, sortKindOf(sort.key)), [sort]);
  // The rows for `filter` when known (kept per change) or answered within the budget, else the latest answer
  // while slices carry the filter on (changes that land meanwhile are applied to it; a newer query or order
  // drops it).
  // The keystroke's own (urgent) render, still showing the earlier query, does no filtering at all.
  const pending =
    deferredQuery === query
      ? !view.advance(order, filter, RENDER_BUDGET_MS)
      : view.answer(order, filter).filter !== filter;
  const now = view.answer(order, filter);
  const rows = now.rows;
  const shownQuery = now.filter === null ? '' : (filterText.get(now.filter) ?? '');
  useEffect(() => {
    if (!pending) return;
    return runSliced(view.advanceSteps(order, filter), () => startTransition(() => setAnswered((n) => n + 1)));
  }, [pending, view, order, filter]);
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
      if (s.size === 0) return s;
      const keep = new Set([...s].filter((k) => view.has(k)));
      return keep.size === s.size ? s : keep;
    });
  }, [view, stamp]);

  const bulk = async (action: BulkAction) => {
    const targets = [...selected]
      .map((k) => view.get(k))
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
            {vmCount}
          </div>
        </div>
        <div className="card">
          <div className="card-label">Running</div>
          <div className="card-value" data-testid="card-running">
            {running} <small>/ {vmCount}</small>
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
        <section
          className="panel"
          aria-labelledby="vms-title"
          aria-busy={pending || deferredQuery !== query}
          data-filtered={shownQuery}
        >
          <div className="panel-head">
            <h2 id="vms-title">Virtual machines and containers</h2>
            <span className="page-sub" data-testid="shown-count">
              {shownCount(rows.length, view.size, shownQuery.trim() !== '', whole ? guestCount : undefined)}
            </span>
            <input
              type="search"
              className="filter-input"
              aria-label="Filter VMs"
              placeholder="Filter: text, type:ct, tag:prod, status:running, node:n1, ns:tailvm (-tag:x excludes)"
              ref={filterBox}
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
              <p>No VM or CT matches “{shownQuery}”.</p>
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
              onTagClick={onTagClick}
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
            .map((k) => view.get(k))
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
