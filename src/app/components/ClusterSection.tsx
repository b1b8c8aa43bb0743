// The resource tree's top level per cluster and its guest rows (ResourceTree.tsx), when Corral serves several
// clusters (domain/registry.ts on the server).
import Link from 'next/link';
import type { CSSProperties, ReactNode } from 'react';
import type { ClusterStatus } from '../lib/model';
import { NodeDot } from './StatusDot';
import './cluster-tree.css';

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
  if (linked)
    return (
      <Link href={href} {...rest}>
        {children}
      </Link>
    );
  const { onClick: _onClick, ...plain } = rest;
  return <span {...plain}>{children}</span>;
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
  return (
    <li
      className={stale ? 'tree-cluster stale' : 'tree-cluster'}
      data-testid="tree-cluster"
      data-context={cluster.context}
    >
      <div style={{ display: 'flex', alignItems: 'center', paddingLeft: 4 }}>
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
      {open && <ul className="tree-cluster-body">{children}</ul>}
    </li>
  );
}
