'use client';
// The Node page: readiness, roles, kubelet, arch, capacity, usage charts and top VMs, and the VMs placed on it (live).
import { useParams, useSearchParams } from 'next/navigation';
import { useMemo, useState } from 'react';
import { contextOfSearch } from '../../lib/cluster-links';
import { rowKey } from '../../lib/fleet-store';
import { useFleet } from '../../lib/live';
import { formatQuantity, parseQuantity } from '../../lib/quantity';
import type { SortSpec } from '../../lib/sort';
import { SumCharts } from '../charts/SumCharts';
import { TopVms } from '../charts/TopVms';
import { NodeDot } from '../StatusDot';
import { vmGuest } from '../../lib/guest-rows';
import { useSortedVms, VmTable, type VmSortKey } from '../VmTable';

export function NodeView() {
  const params = useParams<{ name: string }>();
  const name = decodeURIComponent(params.name);
  // `?context=lab`: a node of another cluster than the default (docs/multi-cluster.md); node names repeat across them.
  const context = contextOfSearch(useSearchParams());
  const { state, version, synced } = useFleet();
  const [sort, setSort] = useState<SortSpec<VmSortKey>>({ key: 'name', dir: 'asc' });
  const node = state.nodes.get(rowKey({ name, context }, state.defaultContext));
  const vms = useMemo(() => {
    void version;
    return state.vms.list().filter((v) => v.node === name && (!node || v.context === node.context));
  }, [state, version, name, node]);
  const guests = useMemo(() => vms.map((vm) => vmGuest(vm, state.defaultContext)), [vms, state.defaultContext]);
  const rows = useSortedVms(guests, sort);

  if (!synced) return <div className="skeleton workbench">Loading…</div>;
  if (!node)
    return (
      <div className="workbench">
        <div className="panel empty">
          <h2>No node “{name}”</h2>
          <p>It is not (or no longer) part of the cluster.</p>
        </div>
      </div>
    );
  const running = vms.filter((v) => v.status === 'Running').length;
  return (
    <div className="workbench">
      <div className="page-head">
        <h1>
          <NodeDot ready={node.ready} /> {node.name}
        </h1>
        <span className="page-sub">
          {state.defaultContext && node.context ? `${node.context} · ` : ''}
          {node.ready ? 'Ready' : 'Not ready'}
          {!node.schedulable && ' · cordoned (unschedulable)'}
        </span>
      </div>
      <div className="cards">
        <div className="card">
          <div className="card-label">VMs here</div>
          <div className="card-value">
            {vms.length} <small>{running} running</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">CPUs</div>
          <div className="card-value">{node.cpu}</div>
        </div>
        <div className="card">
          <div className="card-label">Memory</div>
          <div className="card-value">{formatQuantity(node.memory)}</div>
        </div>
      </div>
      <section className="panel">
        <div className="panel-head">
          <h2>Node</h2>
        </div>
        <div className="panel-body">
          <dl className="kv">
            <dt>Status</dt>
            <dd>{node.ready ? 'Ready' : 'Not ready'}</dd>
            <dt>Schedulable</dt>
            <dd>{node.schedulable ? 'yes' : 'no (cordoned)'}</dd>
            <dt>Roles</dt>
            <dd>{node.roles || '—'}</dd>
            <dt>Kubelet</dt>
            <dd>{node.kubelet}</dd>
            <dt>Architecture</dt>
            <dd>{node.arch}</dd>
            <dt>CPU vendor</dt>
            <dd>{node.cpuVendor || '—'}</dd>
            <dt>Capacity</dt>
            <dd>
              {node.cpu} CPUs · {formatQuantity(node.memory)}
            </dd>
            <dt>Address</dt>
            <dd className="mono">{node.ip || '—'}</dd>
          </dl>
        </div>
      </section>
      <SumCharts
        node={node.name}
        context={context}
        io
        title="Usage of the VMs here"
        capacity={{ cpus: node.cpu, memBytes: parseQuantity(node.memory) }}
      />
      <div className="grid-2">
        <TopVms by="cpu" node={node.name} context={context} />
        <TopVms by="mem" node={node.name} context={context} />
      </div>
      <section className="panel">
        <div className="panel-head">
          <h2>VMs on {node.name}</h2>
          <span className="page-sub">{vms.length}</span>
        </div>
        {rows.length === 0 ? (
          <div className="empty">
            <p>No VM runs on this node.</p>
          </div>
        ) : (
          <VmTable
            rows={rows}
            sort={sort}
            onSort={setSort}
            selected={new Set()}
            onSelect={() => undefined}
            selectable={false}
          />
        )}
      </section>
    </div>
  );
}
