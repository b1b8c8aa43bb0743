'use client';
// The left resource tree, Proxmox style: Server view (nodes → their VMs, unplaced VMs apart), Namespace view, or
// Pool view (pools/PoolTree.tsx: pools nested by path, drag-and-drop onto them).
// Groups render at most GROUP_CAP VMs: at thousands of VMs the tree is for navigation, the table for browsing.
// With several clusters each gets a top level (its health, and when it does not answer its error and a "stale" mark
// over its last-known rows); links to another cluster's nodes and guests carry `?context=` (lib/cluster-links.ts).
// Its filter is answered like the Datacenter's, in slices after the keystroke's frame (lib/sliced.ts); until then
// the tree shows the previous answer, marked busy.
import Link from 'next/link';
import { usePathname, useSearchParams } from 'next/navigation';
import { startTransition, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { contextOfSearch, ctPageHref, vmPageHref, withContext } from '../lib/cluster-links';
import { FilterIndex } from '../lib/filter-index';
import { ctFilterable, isEmptyFilter, parseFilter, type ParsedFilter } from '../lib/filter-query';
import { useFleet } from '../lib/live';
import type { ClusterStatus, CtRow, NodeRow, VmRow } from '../lib/model';
import { runSliced } from '../lib/sliced';
import { groupsOfSteps, type Group, type View } from '../lib/tree-groups';
import { useTypedBeforeHydration } from '../lib/typed-early';
import { firstByNameSteps } from '../lib/first-by-name';
import { drain } from '../lib/filter-index';
import { ctStatus, useCts } from './ct/use-cts';
import { PoolTree } from './pools/PoolTree';
import { NodeDot, StatusDot } from './StatusDot';
import { ClusterSection, TreeLink } from './ClusterSection';

const GROUP_CAP = 100;
const AUTO_EXPAND_LIMIT = 300;

interface Section {
  /** Absent with one cluster: its groups are the top level, as before. */
  cluster?: ClusterStatus;
  groups: Group[];
  count: number;
}

/**
 * A group's first GROUP_CAP guests by name, once per group array: a render for a keystroke does not redo it, and
 * a filtered answer's groups get theirs in its steps.
 */
const firstOfGroup = new WeakMap<readonly object[], readonly object[]>();
function firstShown<T extends { name: string; namespace: string }>(rows: readonly T[]): readonly T[] {
  let first = firstOfGroup.get(rows) as readonly T[] | undefined;
  if (!first) firstOfGroup.set(rows, (first = drain(firstByNameSteps(rows, GROUP_CAP))));
  return first;
}

/** The tree's sections for these rows: one with one cluster, else one per cluster with its own rows. */
function* sectionsSteps(
  view: View,
  vms: readonly VmRow[],
  cts: readonly CtRow[],
  nodes: readonly NodeRow[],
  clusters: readonly ClusterStatus[],
): Generator<void, Section[], void> {
  if (clusters.length < 2) return [{ groups: yield* groupsOfSteps(view, vms, cts, nodes, ''), count: vms.length }];
  const out: Section[] = [];
  for (const cluster of clusters) {
    const mine = <T extends { context: string }>(rows: readonly T[]) =>
      rows.filter((r) => r.context === cluster.context);
    const own = mine(vms);
    yield;
    const groups = yield* groupsOfSteps(view, own, mine(cts), mine(nodes), cluster.context);
    out.push({ cluster, groups, count: own.length });
  }
  return out;
}

/** What the tree shows for one filter over one state of the fleet. */
interface TreeAnswer {
  filter: ParsedFilter;
  vmIndex: FilterIndex<VmRow>;
  ctIndex: FilterIndex<CtRow>;
  version: number;
  view: View;
  sections: Section[];
}

/** The filter's answer in steps: the matching VMs and CTs, their groups, and each group's first GROUP_CAP. */
function* treeFilterSteps(
  at: Omit<TreeAnswer, 'sections'>,
  nodes: readonly NodeRow[],
  clusters: readonly ClusterStatus[],
): Generator<void, TreeAnswer, void> {
  const vms = yield* at.vmIndex.steps(at.filter);
  const cts = yield* at.ctIndex.steps(at.filter);
  const sections = yield* sectionsSteps(at.view, vms, cts, nodes, clusters);
  for (const { groups } of sections)
    for (const g of groups) {
      firstOfGroup.set(g.vms, yield* firstByNameSteps(g.vms, GROUP_CAP));
      firstOfGroup.set(g.cts, yield* firstByNameSteps(g.cts, GROUP_CAP));
    }
  return { ...at, sections };
}

/** The Datacenter's own pages, listed under it in the tree. */
const DATACENTER_PAGES = [
  { href: '/images', icon: '◫', label: 'Images' },
  { href: '/health', icon: '✚', label: 'Health' },
  { href: '/extensions', icon: '◈', label: 'Extensions' },
  { href: '/schedules', icon: '◷', label: 'Schedules' },
  { href: '/proxmox', icon: '⇄', label: 'Proxmox API' },
] as const;

function selectedVm(pathname: string): { ns: string; name: string } | null {
  const m = /^\/(?:vms|cts)\/([^/]+)\/([^/?]+)/.exec(pathname);
  return m?.[1] && m[2] ? { ns: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) } : null;
}

/**
 * The tree, told which cluster the open page's `?context=` names so only that cluster's row is marked current.
 * useSearchParams needs a Suspense boundary: pre-rendered pages get the tree without it, the browser then with it.
 */
export function ResourceTree({ onNavigate }: { onNavigate: () => void }) {
  return (
    <Suspense fallback={<Tree onNavigate={onNavigate} pageContext={undefined} />}>
      <TreeOfPage onNavigate={onNavigate} />
    </Suspense>
  );
}

function TreeOfPage({ onNavigate }: { onNavigate: () => void }) {
  return <Tree onNavigate={onNavigate} pageContext={contextOfSearch(useSearchParams())} />;
}

function Tree({ onNavigate, pageContext }: { onNavigate: () => void; pageContext: string | undefined }) {
  const pathname = usePathname();
  const { state, version } = useFleet();
  const [view, setView] = useState<View>('server');
  const [query, setQuery] = useState('');
  const filterBox = useTypedBeforeHydration(query, setQuery);
  const [toggled, setToggled] = useState<Record<string, boolean>>({});
  const filter = useMemo(() => parseFilter(query), [query]);
  const allCts = useCts();

  const allVms = state.vms.list(); // the same array until the next change
  const vmIndex = useMemo(() => new FilterIndex(allVms), [allVms]);
  const ctIndex = useMemo(() => new FilterIndex(allCts, ctFilterable), [allCts]);
  const empty = isEmptyFilter(filter);
  // The latest answer of the filter, groups and all; a new filter, a live change or another view is answered in
  // slices meanwhile, and the tree shows the previous answer.
  const [answer, setAnswer] = useState<TreeAnswer | null>(null);
  const answered =
    answer?.filter === filter &&
    answer.vmIndex === vmIndex &&
    answer.ctIndex === ctIndex &&
    answer.version === version &&
    answer.view === view;
  // A run is not dropped for a live change (a stream of changes would starve it): it ends, its answer shows, and
  // the next run starts from the newer state. A new filter or view drops it.
  const run = useRef<{ filter: ParsedFilter; view: View; cancel: () => void } | null>(null);
  useEffect(() => {
    if (empty) {
      run.current?.cancel();
      run.current = null;
      setAnswer(null); // the unfiltered tree is what shows now, not an earlier filter's answer
      return;
    }
    if (answered || (run.current?.filter === filter && run.current.view === view)) return;
    run.current?.cancel();
    const steps = treeFilterSteps({ filter, vmIndex, ctIndex, version, view }, state.nodes.list(), state.clusters);
    const cancel = runSliced(steps, (a) => {
      run.current = null;
      startTransition(() => setAnswer(a));
    });
    run.current = { filter, view, cancel };
  }, [empty, answered, answer, filter, vmIndex, ctIndex, version, view, state]);
  useEffect(
    () => () => {
      run.current?.cancel();
      run.current = null;
    },
    [],
  );
  const sections = useMemo<Section[]>(() => {
    void version; // the collections mutate in place; the version says when
    // Filtered: the latest answer's sections. No filter (or none answered yet): the store's own lists, grouped here
    // (the index would copy 50,000 rows to say the same).
    if (!empty && answer) return answer.sections;
    return drain(sectionsSteps(view, allVms, allCts, state.nodes.list(), state.clusters));
  }, [state, version, view, empty, answer, allVms, allCts]);
  const groups = sections.flatMap((x) => x.groups);
  const defaultContext = state.clusters[0]?.context ?? '';

  const selected = selectedVm(pathname);
  // The page's cluster: its `?context=`, else the default one (with one cluster every row matches).
  const pageCluster = pageContext ?? defaultContext;
  const onPage = (row: { name: string; namespace: string; context?: string }) =>
    selected !== null &&
    row.name === selected.name &&
    row.namespace === selected.ns &&
    (!defaultContext || row.context === pageCluster);
  const total = state.vms.size;
  // Groups open by themselves while the tree shows a filtered answer (not while the first answer is pending).
  const expandedByDefault = total <= AUTO_EXPAND_LIMIT || (!empty && answer !== null);
  // Off a VM page nothing is on the page: no walk over a 50,000-row group on every render.
  const isOpen = (g: Group) => toggled[g.key] ?? (expandedByDefault || (selected !== null && g.vms.some(onPage)));

  /** One node or namespace group of the cluster `context` ('' with one cluster); its links name that cluster. */
  const renderGroup = (g: Group, context: string) => {
    const open = isOpen(g);
    const groupHref = g.href && withContext(g.href, context, defaultContext);
    return (
      <li key={g.key}>
        <div style={{ display: 'flex', alignItems: 'center', paddingLeft: 4 }}>
          <button
            type="button"
            className="tree-toggle"
            aria-expanded={open}
            aria-label={`${open ? 'Collapse' : 'Expand'} ${g.label}`}
            onClick={() => setToggled((t) => ({ ...t, [g.key]: !open }))}
          >
            {open ? '▾' : '▸'}
          </button>
          {groupHref ? (
            <Link
              href={groupHref}
              className="tree-item"
              style={{ flex: 1, paddingLeft: 4 }}
              aria-current={pathname === groupHref ? 'page' : undefined}
              onClick={onNavigate}
            >
              <NodeDot ready={g.ready ?? false} />
              <span className="label">{g.label}</span>
              <span className="count">{g.vms.length + g.cts.length}</span>
            </Link>
          ) : (
            <span className="tree-item" style={{ flex: 1, paddingLeft: 4 }}>
              {g.ready !== undefined ? (
                <NodeDot ready={g.ready} />
              ) : (
                <span className="icon" aria-hidden>
                  {view === 'namespace' ? '◫' : '○'}
                </span>
              )}
              <span className="label">{g.label}</span>
              <span className="count">{g.vms.length + g.cts.length}</span>
            </span>
          )}
        </div>
        {open && (
          <ul>
            {firstShown(g.vms).map((vm) => {
              const href = vmPageHref(vm, defaultContext);
              const current = onPage(vm);
              return (
                <li key={`${vm.namespace}/${vm.name}`}>
                  <TreeLink
                    linked
                    href={href}
                    className="tree-item"
                    style={{ paddingLeft: 38 }}
                    aria-current={current ? 'page' : undefined}
                    title={`${vm.namespace}/${vm.name} — ${vm.status}`}
                    onClick={onNavigate}
                  >
                    <StatusDot status={vm.status} />
                    <span className="label">{vm.name}</span>
                    {view === 'server' && <span className="count">{vm.namespace}</span>}
                  </TreeLink>
                </li>
              );
            })}
            {firstShown(g.cts).map((ct) => {
              const current = onPage(ct);
              return (
                <li key={`ct:${ct.namespace}/${ct.name}`}>
                  <TreeLink
                    linked
                    href={ctPageHref(ct, defaultContext)}
                    className="tree-item"
                    style={{ paddingLeft: 38 }}
                    aria-current={current ? 'page' : undefined}
                    title={`CT ${ct.namespace}/${ct.name} — ${ct.phase}`}
                    data-testid="tree-ct"
                    onClick={onNavigate}
                  >
                    <StatusDot status={ctStatus(ct)} />
                    <span className="icon" aria-label="Container" role="img">
                      ⬡
                    </span>
                    <span className="label">{ct.name}</span>
                    {view === 'server' && <span className="count">{ct.namespace}</span>}
                  </TreeLink>
                </li>
              );
            })}
            {g.vms.length > GROUP_CAP && (
              <li className="tree-more">+{g.vms.length - GROUP_CAP} more — narrow with the filter</li>
            )}
          </ul>
        )}
      </li>
    );
  };

  return (
    <nav className="tree-pane" id="resource-tree" aria-label="Resource tree" aria-busy={!empty && !answered}>
      <div className="tree-tools">
        <div className="segmented" role="group" aria-label="Tree view">
          <button
            type="button"
            aria-label="Server view"
            aria-pressed={view === 'server'}
            onClick={() => setView('server')}
          >
            Server
          </button>
          <button
            type="button"
            aria-label="Namespace view"
            aria-pressed={view === 'namespace'}
            onClick={() => setView('namespace')}
          >
            Namespace
          </button>
          <button type="button" aria-label="Pool view" aria-pressed={view === 'pool'} onClick={() => setView('pool')}>
            Pool
          </button>
        </div>
        <input
          type="search"
          placeholder="Filter: name, type:ct, tag:prod, status:running"
          aria-label="Filter the resource tree"
          ref={filterBox}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </div>
      <div className="tree">
        <ul>
          <li>
            <Link
              href="/"
              className="tree-item"
              aria-current={pathname === '/' ? 'page' : undefined}
              onClick={onNavigate}
            >
              <span className="icon" aria-hidden>
                ▦
              </span>
              <span className="label">Datacenter</span>
              <span className="count">{total}</span>
            </Link>
          </li>
          {DATACENTER_PAGES.map((page) => (
            <li key={page.href}>
              <Link
                href={page.href}
                className="tree-item"
                aria-current={pathname === page.href ? 'page' : undefined}
                onClick={onNavigate}
              >
                <span className="icon" aria-hidden>
                  {page.icon}
                </span>
                <span className="label">{page.label}</span>
              </Link>
            </li>
          ))}
        </ul>
        {view === 'pool' && <PoolTree onNavigate={onNavigate} />}
        <div className="tree-group-title" hidden={view === 'pool'}>
          {view === 'server' ? 'Nodes' : 'Namespaces'}
        </div>
        {view !== 'pool' && groups.length === 0 && (
          <div className="tree-more">{total === 0 ? 'No VMs yet' : 'Nothing matches the filter'}</div>
        )}
        <ul hidden={view === 'pool'}>
          {sections.map((section) =>
            section.cluster ? (
              <ClusterSection
                key={`cluster:${section.cluster.context}`}
                cluster={section.cluster}
                count={section.count}
                open={toggled[`cluster:${section.cluster.context}`] ?? true}
                onToggle={(open) => setToggled((t) => ({ ...t, [`cluster:${section.cluster!.context}`]: open }))}
              >
                {section.groups.map((g) => renderGroup(g, section.cluster!.context))}
              </ClusterSection>
            ) : (
              section.groups.map((g) => renderGroup(g, ''))
            ),
          )}
        </ul>
      </div>
    </nav>
  );
}
