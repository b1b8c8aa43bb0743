'use client';
// The guest table: VMs and CTs (lib/guest-rows.ts) in sortable columns, multi-select, windowed rows (only what is
// on screen is in the DOM, so 50,000 guests scroll like 10). With `showType` a Type column tells VMs from CTs.
// Filtering happens in the caller; this renders what it is given. Rows are keyed and selected by GuestRow.key, which
// names the row's cluster unless it is the default one, so namesakes on two clusters are two rows.
// Every row is ROW_HEIGHT tall, so the window is arithmetic (lib/row-window.ts): nothing is measured, and a new row
// count (a filter keystroke) costs nothing per row. Rows are memoized on their GuestRow object and selection, so a
// live change re-renders only the rows that differ, and they are keyed by slot, so a keystroke updates the rows on
// screen in place instead of replacing them (docs/scale.md, "Keystroke in the page").
import Link from 'next/link';
import { memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { GuestRow } from '../lib/guest-rows';
import { formatQuantity } from '../lib/quantity';
import { rowWindow } from '../lib/row-window';
import { sortRows, compareNames, type SortKind, type SortSpec } from '../lib/sort';
import { StatusDot } from './StatusDot';

export type VmSortKey = 'type' | 'name' | 'status' | 'node' | 'namespace' | 'cpu' | 'mem' | 'ip';

interface Column {
  key: VmSortKey;
  label: string;
  kind: SortKind;
  numeric?: boolean;
}
const TYPE_COLUMN: Column = { key: 'type', label: 'Type', kind: 'text' };
const COLUMNS: Column[] = [
  { key: 'name', label: 'Name', kind: 'text' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'node', label: 'Node', kind: 'text' },
  { key: 'namespace', label: 'Namespace', kind: 'text' },
  { key: 'cpu', label: 'vCPU', kind: 'number', numeric: true },
  { key: 'mem', label: 'Memory', kind: 'quantity', numeric: true },
  { key: 'ip', label: 'IP', kind: 'ip' },
];

const ROW_HEIGHT = 34;
/** Rows rendered beyond each edge of the viewport, so a scroll shows rows before React catches up. */
const OVERSCAN = 6;
/** The scroller's height before it has been measured (its CSS max-height). */
const FIRST_VIEWPORT = 640;
const byName = (a: GuestRow, b: GuestRow) =>
  compareNames(a.name, b.name) || compareNames(a.namespace, b.namespace) || compareNames(a.type, b.type);

const TYPE_LABEL = { vm: 'Virtual machine', ct: 'Container' } as const;

/** How a column sorts (text, number, size, IP). */
export function sortKindOf(key: VmSortKey): SortKind {
  return [TYPE_COLUMN, ...COLUMNS].find((c) => c.key === key)?.kind ?? 'text';
}

export function useSortedVms(rows: readonly GuestRow[], sort: SortSpec<VmSortKey>): GuestRow[] {
  return useMemo(() => sortRows(rows, sort, sortKindOf(sort.key), byName), [rows, sort]);
}

/** The rows of `count` in the scroller's viewport (plus OVERSCAN), following scrolls and resizes. */
function useRowWindow(scrollRef: React.RefObject<HTMLDivElement | null>, count: number) {
  const [view, setView] = useState({ top: 0, height: FIRST_VIEWPORT });
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    // Re-render only when the first row on screen or the height changes, not on every scrolled pixel.
    const read = () =>
      setView((v) => {
        const top = Math.floor(el.scrollTop / ROW_HEIGHT) * ROW_HEIGHT;
        const height = el.clientHeight || FIRST_VIEWPORT;
        return v.top === top && v.height === height ? v : { top, height };
      });
    read();
    el.addEventListener('scroll', read, { passive: true });
    const resize = new ResizeObserver(read);
    resize.observe(el);
    return () => {
      el.removeEventListener('scroll', read);
      resize.disconnect();
    };
  }, [scrollRef]);
  // More slots than rows can ever be in the window at this height: `index % slots` never repeats within it.
  const slots = Math.ceil(view.height / ROW_HEIGHT) + 1 + 2 * OVERSCAN;
  return { ...rowWindow(view.top, view.height, ROW_HEIGHT, count, OVERSCAN), slots };
}

interface RowProps {
  vm: GuestRow;
  index: number;
  selected: boolean;
  selectable: boolean;
  showType: boolean;
  onToggle: (key: string) => void;
  onTagClick?: (tag: string) => void;
}

/** One row; the same props (the same GuestRow object) render nothing again. */
const Row = memo(function Row({ vm, index, selected, selectable, showType, onToggle, onTagClick }: RowProps) {
  const key = vm.key;
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      className="vm-row vm-body-row"
      data-vm={vm.type === 'vm' ? key : undefined}
      data-ct={vm.type === 'ct' ? key.replace(/^ct:/, '') : undefined}
      data-context={vm.context}
      style={{ top: index * ROW_HEIGHT }}
    >
      <div role="gridcell">
        {selectable && (
          <input
            type="checkbox"
            aria-label={vm.cluster ? `Select ${vm.name} on ${vm.cluster}` : `Select ${vm.name}`}
            checked={selected}
            onChange={() => onToggle(key)}
          />
        )}
      </div>
      {showType && (
        <div role="gridcell" data-col="type" title={TYPE_LABEL[vm.type]}>
          <span className="icon" role="img" aria-label={TYPE_LABEL[vm.type]}>
            {vm.type === 'ct' ? '⬡' : '▭'}
          </span>{' '}
          <span className="type-word">{vm.type.toUpperCase()}</span>
        </div>
      )}
      <div role="gridcell" className="vm-name">
        {/* No prefetch: a keystroke swaps every row, and each prefetching link registers with an observer. */}
        <Link href={vm.href} prefetch={false}>
          {vm.name}
        </Link>
        {vm.template && <span className="tag">template</span>}
        {vm.tags.map((t) =>
          onTagClick ? (
            <button key={t} type="button" className="tag" onClick={() => onTagClick(t)} title={`Filter by tag:${t}`}>
              {t}
            </button>
          ) : (
            <span key={t} className="tag">
              {t}
            </span>
          ),
        )}
      </div>
      <div role="gridcell" data-col="status" className="vm-status">
        <StatusDot status={vm.dot} />
        <span>{vm.status}</span>
      </div>
      <div role="gridcell">{vm.node || <span className="page-sub">—</span>}</div>
      <div role="gridcell">{vm.namespace}</div>
      <div role="gridcell" className="num">
        {vm.cpu || '—'}
      </div>
      <div role="gridcell" className="num">
        {formatQuantity(vm.mem) || '—'}
      </div>
      <div role="gridcell" className="mono">
        {vm.ip}
      </div>
    </div>
  );
});

/** Memoized: a parent's render with the same rows, sort and selection (a keystroke still deferred) skips it. */
export const VmTable = memo(function VmTable({
  rows,
  sort,
  onSort,
  selected,
  onSelect,
  selectable,
  onTagClick,
  showType = false,
}: {
  rows: readonly GuestRow[];
  sort: SortSpec<VmSortKey>;
  onSort: (s: SortSpec<VmSortKey>) => void;
  selected: ReadonlySet<string>;
  onSelect: (next: Set<string>) => void;
  selectable: boolean;
  /** Keep it the same function between renders, or every row on screen renders again. */
  onTagClick?: (tag: string) => void;
  /** A Type column (VM / CT icon) for tables that mix both. */
  showType?: boolean;
}) {
  // A CT has cores, not vCPUs: a mixed table says CPU.
  const columns = showType
    ? [TYPE_COLUMN, ...COLUMNS.map((c) => (c.key === 'cpu' ? { ...c, label: 'CPU' } : c))]
    : COLUMNS;
  const scrollRef = useRef<HTMLDivElement>(null);
  const { start, end, slots } = useRowWindow(scrollRef, rows.length);
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.key));

  // One toggle for every row (the latest selection through a ref), so a row's props stay equal between renders.
  const latest = useRef({ selected, onSelect });
  latest.current = { selected, onSelect };
  const toggle = useCallback((key: string) => {
    const next = new Set(latest.current.selected);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    latest.current.onSelect(next);
  }, []);

  const body: React.ReactNode[] = [];
  for (let i = start; i < end; i++) {
    const vm = rows[i]!;
    body.push(
      // Keyed by slot, not by guest: a keystroke that shows other guests rewrites the rows' text and attributes in
      // place instead of removing and creating every row (and its styles); a scroll by one row reuses the one slot
      // that left. Unchanged rows keep their props and skip rendering.
      <Row
        key={i % slots}
        vm={vm}
        index={i}
        selected={selected.has(vm.key)}
        selectable={selectable}
        showType={showType}
        onToggle={toggle}
        onTagClick={onTagClick}
      />,
    );
  }

  return (
    <div className="vm-table-scroll" ref={scrollRef} data-testid="vm-table">
      <div
        className={showType ? 'vm-table with-type' : 'vm-table'}
        role="grid"
        aria-rowcount={rows.length + 1}
        aria-multiselectable={selectable}
      >
        <div className="vm-row vm-head" role="row" aria-rowindex={1}>
          <div role="columnheader">
            {selectable && (
              <input
                type="checkbox"
                aria-label={allSelected ? 'Clear selection' : `Select all ${rows.length} shown`}
                checked={allSelected}
                onChange={() => onSelect(allSelected ? new Set() : new Set(rows.map((r) => r.key)))}
              />
            )}
          </div>
          {columns.map((c) => {
            const active = sort.key === c.key;
            return (
              <div
                key={c.key}
                role="columnheader"
                className={c.numeric ? 'num' : undefined}
                aria-sort={active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
              >
                <button
                  type="button"
                  className="sort"
                  data-active={active}
                  onClick={() => onSort({ key: c.key, dir: active && sort.dir === 'asc' ? 'desc' : 'asc' })}
                >
                  {c.label}
                  {active ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                </button>
              </div>
            );
          })}
        </div>
        <div className="vm-table-body" style={{ height: rows.length * ROW_HEIGHT }}>
          {body}
        </div>
      </div>
    </div>
  );
});
