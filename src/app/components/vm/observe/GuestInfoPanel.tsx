'use client';
// The Summary tab's guest-info block: what the guest agent reports (OS, hostname, timezone, users, filesystems as
// usage bars, addresses per interface), or why there is nothing to show (the VM is not running; no agent answers).
// Read once, and again when the live VM row changes in a way that matters (started, agent connected, moved) — the
// row arrives pushed, so this never polls.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { GuestInfo } from '@/server/schemas/vm-observe';
import type { VmRow } from '../../../lib/model';
import { formatBytes } from '../../../lib/quantity';
import { useTRPC } from '../../../lib/trpc';
import { formatOffset, usageLevel, usagePercent } from '../../../lib/vm-observe';
import './observe.css';
import { vmRef } from '../../../lib/cluster-links';

/**
 * `agent`: the AgentConnected condition KubeVirt copies onto the VM (undefined until the manifest is read). The agent
 * is asked only when it is connected, so a guest without one costs no request (and no 503 in the browser console).
 */
export function GuestInfoPanel({ vm, agent }: { vm: VmRow; agent: boolean | undefined }) {
  const trpc = useTRPC();
  const running = vm.status === 'Running';
  const connected = running && (agent === true || vm.os !== '');
  const info = useQuery({
    ...trpc.observe.guestInfo.queryOptions({ ...vmRef(vm) }),
    enabled: connected,
    retry: false,
  });
  // The first render's fetch is the query's own; later changes of the row ask again.
  const { refetch } = info;
  const mounted = useRef(false);
  useEffect(() => {
    if (mounted.current && connected) void refetch();
    mounted.current = true;
  }, [connected, vm.os, vm.node, vm.ip, refetch]);

  let state: { title: string; detail: string } | undefined;
  if (!running)
    state = {
      title: vm.status === 'Paused' ? 'VM paused' : 'VM not running',
      detail: `The guest agent reports only while the VM runs (${vm.status}).`,
    };
  else if (!connected)
    state = {
      title: 'Guest agent not connected',
      detail: 'The guest runs no qemu-guest-agent, or it has not started yet. This updates by itself when it connects.',
    };
  else if (info.error)
    state = {
      title: /not running|paused/i.test(info.error.message) ? 'VM not running' : 'Guest agent not connected',
      detail: info.error.message,
    };

  return (
    <section className="panel guest-panel" aria-labelledby="guest-title" data-testid="guest-info">
      <div className="panel-head">
        <h2 id="guest-title">Guest</h2>
      </div>
      <div className="panel-body">
        {state ? (
          <div className="guest-state" data-testid="guest-state" role="status">
            <strong>{state.title}</strong>
            <span className="page-sub">{state.detail}</span>
          </div>
        ) : !info.data ? (
          <p className="page-sub">Asking the guest agent…</p>
        ) : (
          <GuestDetails info={info.data} />
        )}
      </div>
    </section>
  );
}

function GuestDetails({ info }: { info: GuestInfo }) {
  return (
    <div className="guest-grid">
      <dl className="kv" data-testid="guest-os">
        <dt>OS</dt>
        <dd>{info.os.prettyName || info.os.name || '—'}</dd>
        <dt>Kernel</dt>
        <dd className="mono">
          {info.os.kernelRelease || '—'}
          {info.os.machine ? ` (${info.os.machine})` : ''}
        </dd>
        <dt>Hostname</dt>
        <dd className="mono">{info.hostname || '—'}</dd>
        <dt>Timezone</dt>
        <dd>
          {info.timezone.name} ({formatOffset(info.timezone.offsetSeconds)})
        </dd>
        <dt>Users</dt>
        <dd>
          {info.users.length === 0
            ? 'nobody logged in'
            : info.users.map((u) => (
                <span
                  key={`${u.domain ?? ''}\\${u.name}`}
                  title={`logged in ${new Date(u.loginTime).toLocaleString()}`}
                >
                  {u.domain ? `${u.domain}\\` : ''}
                  {u.name}{' '}
                </span>
              ))}
        </dd>
        <dt>Agent</dt>
        <dd>qemu-guest-agent {info.agentVersion || '—'}</dd>
      </dl>
      <div className="guest-col">
        <h3 className="guest-sub">Filesystems</h3>
        {info.filesystems.length === 0 && <p className="page-sub">None reported</p>}
        <ul className="fs-list" data-testid="guest-filesystems">
          {info.filesystems.map((fs) => {
            const pct = usagePercent(fs);
            return (
              <li key={fs.mountpoint}>
                <div className="fs-line">
                  <span className="mono">{fs.mountpoint}</span>
                  <span className="page-sub">
                    {fs.type}
                    {fs.disks.length ? ` on ${fs.disks.join(', ')}` : ''}
                  </span>
                  <span className="fs-size">
                    {formatBytes(fs.usedBytes)} / {formatBytes(fs.totalBytes)}
                  </span>
                </div>
                <div
                  className={`usage-bar usage-${usageLevel(pct)}`}
                  role="meter"
                  aria-label={`${fs.mountpoint} used`}
                  aria-valuemin={0}
                  aria-valuemax={100}
                  aria-valuenow={Math.round(pct)}
                  title={`${pct.toFixed(1)} % used`}
                >
                  <span style={{ width: `${pct}%` }} />
                </div>
              </li>
            );
          })}
        </ul>
        <h3 className="guest-sub">Network</h3>
        {info.interfaces.length === 0 && <p className="page-sub">No interfaces reported</p>}
        <ul className="nic-list" data-testid="guest-interfaces">
          {info.interfaces.map((nic) => (
            <li key={`${nic.name}-${nic.mac}`}>
              <span className="mono nic-name">{nic.name || '—'}</span>
              <span className="mono page-sub">{nic.mac}</span>
              <span className="mono nic-ips">{nic.ips.length ? nic.ips.join(', ') : 'no address'}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
