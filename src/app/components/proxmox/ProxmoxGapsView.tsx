'use client';
// Datacenter → Proxmox API: what Proxmox clients (Terraform, Ansible, proxmoxer, scripts) asked for that Corral does
// not serve — the gap log as a table, most requested first, with the last caller. Admins only (it names users and
// tokens); read again every 15 s while open.
import { useQuery } from '@tanstack/react-query';
import type { ProxmoxGapReport } from '@/server/schemas/proxmox';
import type { z } from 'zod';
import { relativeTime } from '../../lib/vm-observe';
import { useTRPC } from '../../lib/trpc';
import './proxmox.css';

type Report = z.infer<typeof ProxmoxGapReport>;

function summary(report: Report | undefined): string {
  if (!report) return 'Reading the gap log…';
  const requests = report.gaps.reduce((n, g) => n + g.count, 0);
  if (!report.gaps.length) return 'Every endpoint clients asked for is served';
  return `${report.gaps.length} endpoint${report.gaps.length === 1 ? '' : 's'} missing · ${requests} request${requests === 1 ? '' : 's'}`;
}

export function ProxmoxGapsView() {
  const trpc = useTRPC();
  const gaps = useQuery({ ...trpc.proxmox.gaps.queryOptions(), refetchInterval: 15_000 });
  const report = gaps.data;
  const now = Date.now();
  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Proxmox API</h1>
        <span className="page-sub">{summary(report)}</span>
      </div>
      <section className="panel" aria-label="Endpoints clients asked for that Corral does not serve">
        <div className="panel-head">
          <h2>Not served</h2>
          <span className="page-sub">
            Requests under /api2/json that answered 501 since Corral started; ids and names are shown as {'{node}'},{' '}
            {'{id}'}, …
          </span>
        </div>
        {gaps.isError && (
          <div className="panel-body">
            <div className="inline-error">Could not read the gap log: {gaps.error.message}</div>
          </div>
        )}
        {report && report.gaps.length === 0 && (
          <div className="panel-body" data-testid="gaps-empty">
            No Proxmox client has asked for an endpoint Corral does not serve since it started.
          </div>
        )}
        {report && report.gaps.length > 0 && (
          <div className="table-scroll">
            <table className="data-table" data-testid="gaps-table">
              <thead>
                <tr>
                  <th>Endpoint</th>
                  <th className="num">Requests</th>
                  <th className="hide-phone">Last asked</th>
                  <th className="hide-phone">Last caller</th>
                </tr>
              </thead>
              <tbody>
                {report.gaps.map((g) => (
                  <tr key={`${g.method} ${g.path}`} data-gap={`${g.method} ${g.path}`}>
                    <td>
                      <span className="mono">
                        {g.method} {g.path}
                      </span>
                      {g.example !== g.path && <span className="page-sub mono gap-example">e.g. {g.example}</span>}
                      <span className="show-phone page-sub">
                        {relativeTime(g.lastSeen, now)} · {g.lastCaller}
                      </span>
                    </td>
                    <td className="num">{g.count}</td>
                    <td className="hide-phone" title={g.lastSeen}>
                      {relativeTime(g.lastSeen, now)}
                    </td>
                    <td className="hide-phone mono">{g.lastCaller}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {report && report.dropped > 0 && (
          <div className="panel-body page-sub">
            {report.dropped} more request{report.dropped === 1 ? '' : 's'} for other endpoints were counted but not
            itemised (the log keeps {report.capacity}).
          </div>
        )}
      </section>
    </div>
  );
}
