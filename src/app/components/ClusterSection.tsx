// The resource tree's top level per cluster and its guest rows (ResourceTree.tsx), when Corral serves several
// clusters (domain/registry.ts on the server). A VM or CT row drags (as its ref `kubevirt/<context>/<ns>/<name>`, a
// CT's with its kind beside it) onto another cluster's top level, which opens the move dialog (move/MoveDialog.tsx,
// docs/move.md).
import Link from 'next/link';
import { useState, type CSSProperties, type DragEvent, type ReactNode } from 'react';
import type { ClusterStatus } from '../lib/model';
import { MoveDialog, parseMoveRef, type MoveSource } from './move/MoveDialog';
import { DRAG_TYPE, dragGuest, draggedRef } from './pools/use-folders';
import { NodeDot } from './StatusDot';
import './cluster-tree.css';

const VM_HREF = /^\/vms\/([^/?]+)\/([^/?]+)/;
const CT_HREF = /^\/cts\/([^/?]+)\/([^/?]+)/;
/** Set beside the ref when the dragged guest is a CT (a pool drop reads the ref alone). */
const KIND_TYPE = 'application/x-corral-guest-kind';

export /** A guest in the tree: a link to its page, or (another cluster's guest) the same row without one. */
function TreeLink({
  linked,
  href,
  children,
  ...rest
}: {
  linked: boolean;
  href: string;
  children: ReactNode;
  className: string;
  style: CSSProperties;
  title: string;
  onClick: () => void;
  'aria-current'?: 'page';
  'data-testid'?: string;
}) {
  // A VM or CT row carries its namespace/name for a drag onto another cluster (ClusterSection adds the context).
  const vm = VM_HREF.exec(href);
  const ct = vm ? null : CT_HREF.exec(href);
  const at = (m: RegExpExecArray) => `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
  const drag = vm ? { draggable: true, 'data-move-vm': at(vm) } : ct ? { draggable: true, 'data-move-ct': at(ct) } : {};
  if (linked)
    return (
      <Link href={href} {...rest} {...drag}>
        {children}
      </Link>
    );
  const { onClick: _onClick, ...plain } = rest;
  return (
    <span {...plain} {...drag}>
      {children}
    </span>
  );
}

/** One cluster's top level: its name, health and guest count; when it does not answer, why, and its rows marked stale. */
export function ClusterSection({
  cluster,
  count,
  open,
  onToggle,
  children,
}: {
  cluster: ClusterStatus;
  count: number;
  open: boolean;
  onToggle: (open: boolean) => void;
  children: ReactNode;
}) {
  const stale = !cluster.ready;
  const [over, setOver] = useState(false);
  const [moving, setMoving] = useState<MoveSource | null>(null);
  // A VM or CT row of this cluster starts a drag: its ref, under the same type pool drops read (a CT's kind beside).
  const dragStart = (e: DragEvent) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>('[data-move-vm],[data-move-ct]');
    const guest = row?.dataset.moveVm ?? row?.dataset.moveCt;
    if (!guest) return;
    dragGuest(e, { ref: `kubevirt/${cluster.context}/${guest}` });
    if (row?.dataset.moveCt) e.dataTransfer.setData(KIND_TYPE, 'ct');
  };
  const dragOver = (e: DragEvent) => {
    if (!e.dataTransfer.types.includes(DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    setOver(true);
  };
  const drop = (e: DragEvent) => {
    setOver(false);
    const source = parseMoveRef(draggedRef(e) ?? '');
    if (!source) return;
    e.preventDefault();
    setMoving(e.dataTransfer.types.includes(KIND_TYPE) ? { ...source, kind: 'ct' } : source);
  };
  return (
    <li
      className={['tree-cluster', stale ? 'stale' : '', over ? 'drop-target' : ''].filter(Boolean).join(' ')}
      data-testid="tree-cluster"
      data-context={cluster.context}
    >
      <div
        style={{ display: 'flex', alignItems: 'center', paddingLeft: 4 }}
        onDragOver={dragOver}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
        data-testid="tree-cluster-head"
        title={`Drop a VM or CT here to move it to ${cluster.context}`}
      >
        <button
          type="button"
          className="tree-toggle"
          aria-expanded={open}
          aria-label={`${open ? 'Collapse' : 'Expand'} cluster ${cluster.context}`}
          onClick={() => onToggle(!open)}
        >
          {open ? '▾' : '▸'}
        </button>
        <span className="tree-item" style={{ flex: 1, paddingLeft: 4 }} title={`${cluster.name} — ${cluster.server}`}>
          <NodeDot ready={cluster.ready} />
          <span className="label">
            {cluster.context}
            {cluster.default && <span className="tree-cluster-tag"> default</span>}
            {stale && <span className="tree-cluster-tag stale-tag"> stale</span>}
          </span>
          <span className="count">{count}</span>
        </span>
      </div>
      {open && stale && (
        <div className="tree-cluster-error" role="status">
          Not answering — showing its last-known state. {cluster.problems[0] ?? ''}
        </div>
      )}
      {open && (
        <ul className="tree-cluster-body" onDragStart={dragStart}>
          {children}
        </ul>
      )}
      {moving && <MoveDialog source={moving} toContext={cluster.context} open onClose={() => setMoving(null)} />}
    </li>
  );
}
