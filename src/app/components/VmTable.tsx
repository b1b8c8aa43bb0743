'use client';
// The guest table: VMs and CTs (lib/guest-rows.ts) in sortable columns, multi-select, virtualized rows (only what
// is on screen is in the DOM, so 10,000 VMs scroll like 10). With `showType` a Type column tells VMs from CTs.
// Filtering happens in the caller; this renders what it is given. Rows are keyed and selected by GuestRow.key, which
// names the row's cluster unless it is the default one, so namesakes on two clusters are two rows.
import { useVirtualizer } from '@tanstack/react-virtual';
import Link from 'next/link';
import { useMemo, useRef } from 'react';
import type { GuestRow } from '../lib/guest-rows';
import { formatQuantity } from '../lib/quantity';
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
const byName = (a: GuestRow, b: GuestRow) =>
  compareNames(a.name, b.name) || compareNames(a.namespace, b.namespace) || compareNames(a.type, b.type);

const TYPE_LABEL = { vm: 'Virtual machine', ct: 'Container' } as const;

export function useSortedVms(rows: readonly GuestRow[], sort: SortSpec<VmSortKey>): GuestRow[] {
  return useMemo(() => {
    const kind = [TYPE_COLUMN, ...COLUMNS].find((c) => c.key === sort.key)?.kind ?? 'text';
    return sortRows(rows, sort, kind, byName);
  }, [rows, sort]);
}

export function VmTable({
  rows,
  sort,
  onSort,
  selected,
  onSelect,
  selectable,
  onTagClick,
  showType = false,
}: {
  rows: GuestRow[];
  sort: SortSpec<VmSortKey>;
  onSort: (s: SortSpec<VmSortKey>) => void;
  selected: ReadonlySet<string>;
  onSelect: (next: Set<string>) => void;
  selectable: boolean;
  onTagClick?: (tag: string) => void;
  /** A Type column (VM / CT icon) for tables that mix both. */
  showType?: boolean;
}) {
  // A CT has cores, not vCPUs: a mixed table says CPU.
  const columns = showType
    ? [TYPE_COLUMN, ...COLUMNS.map((c) => (c.key === 'cpu' ? { ...c, label: 'CPU' } : c))]
    : COLUMNS;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.key));

  const toggle = (key: string) => {
    const next = new Set(selected);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    onSelect(next);
  };

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
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const vm = rows[item.index];
            if (!vm) return null;
            const key = vm.key;
            const isSelected = selected.has(key);
            return (
              <div
                key={key}
                role="row"
                aria-rowindex={item.index + 2}
                aria-selected={isSelected}
                className="vm-row vm-body-row"
                data-vm={vm.type === 'vm' ? key : undefined}
                data-ct={vm.type === 'ct' ? key.replace(/^ct:/, '') : undefined}
                data-context={vm.context}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${item.start}px)` }}
              >
                <div role="gridcell">
                  {selectable && (
                    <input
                      type="checkbox"
                      aria-label={vm.cluster ? `Select ${vm.name} on ${vm.cluster}` : `Select ${vm.name}`}
                      checked={isSelected}
                      onChange={() => toggle(key)}
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
                  <Link href={vm.href}>{vm.name}</Link>
                  {vm.template && <span className="tag">template</span>}
                  {vm.tags.map((t) =>
                    onTagClick ? (
                      <button
                        key={t}
                        type="button"
                        className="tag"
                        onClick={() => onTagClick(t)}
                        title={`Filter by tag:${t}`}
                      >
                        {t}
                      </button>
                    ) : (
                      <span key={t} className="tag">
                        {t}
                      </span>
                    ),
                  )}
                </div>
                <div role="gridcell" data-col="status" style={{ display: 'flex', alignItems: 'center', gap: 6 }}>
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
          })}
        </div>
      </div>
    </div>
  );
}
