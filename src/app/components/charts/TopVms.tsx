'use client';
// "Top VMs by CPU / by memory": the newest sample of each running VM, busiest first (`metrics.top`), each row a
// link to the VM with a bar relative to the busiest. Refreshed when the live stream reports a sampling round.
import Link from 'next/link';
import { useId } from 'react';
import { formatBytesShort, formatCpu } from '../../lib/metric-format';
import { useTopVms } from './use-metrics';
import './charts.css';

export function TopVms({
  by,
  node,
  context,
  limit = 5,
}: {
  by: 'cpu' | 'mem';
  node?: string;
  /** The node's cluster when it is not the default one. */
  context?: string;
  limit?: number;
}) {
  const headId = useId();
  const top = useTopVms(by, node, limit, context);
  const rows = top.data ?? [];
  const value = (r: { cpu: number; mem?: number }) => (by === 'cpu' ? r.cpu : (r.mem ?? 0));
  const max = Math.max(1, ...rows.map(value));
  return (
    <section className="panel" aria-labelledby={headId} data-testid={`top-${by}`}>
      <div className="panel-head">
        <h2 id={headId}>Top VMs by {by === 'cpu' ? 'CPU' : 'memory'}</h2>
        {node && <span className="page-sub">on {node}</span>}
      </div>
      {top.isPending ? (
        <div className="empty">
          <p>Loading…</p>
        </div>
      ) : top.error ? (
        <div className="empty">
          <p className="result-err">{top.error.message}</p>
        </div>
      ) : rows.length === 0 ? (
        <div className="empty">
          <p>No running VM has been measured yet.</p>
        </div>
      ) : (
        <ol className="top-list">
          {rows.map((r) => (
            <li key={`${r.namespace}/${r.name}`} data-top={`${r.namespace}/${r.name}`} data-value={value(r)}>
              <Link href={topHref(r, context)}>{r.name}</Link>
              <span className="top-sub">
                {r.namespace}
                {node ? '' : ` · ${r.node}`}
              </span>
              <span className="top-value">
                {by === 'cpu' ? formatCpu(r.cpu) : r.mem === undefined ? '—' : formatBytesShort(r.mem)}
              </span>
              <span className="top-bar" aria-hidden="true">
                <span style={{ width: `${(value(r) / max) * 100}%` }} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** A VM of the list; `context` is only given for another cluster than the default, whose pages carry it. */
function topHref(r: { namespace: string; name: string }, context: string | undefined): string {
  const path = `/vms/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`;
  return context ? `${path}?context=${encodeURIComponent(context)}` : path;
}
