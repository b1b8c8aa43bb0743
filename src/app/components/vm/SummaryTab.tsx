'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useDefaultContext } from '../../lib/live';
import { formatQuantity } from '../../lib/quantity';
import { useTRPC } from '../../lib/trpc';
import { agentConnected, liveMigratable, useVmManifest } from '../../lib/vm-manifest';
import { VmCharts } from '../charts/VmCharts';
import { StatusDot } from '../StatusDot';
import { GuestInfoPanel } from './observe/GuestInfoPanel';
import type { VmTabProps } from './tabs';
import { nodePageHref, vmRef } from '../../lib/cluster-links';

// Same rule as the server's Tag schema (a label-name segment), so a bad tag is explained before the round trip.
const TAG = /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/;

function tagProblem(tag: string): string | null {
  if (tag === '') return null;
  if (tag.length > 63) return 'At most 63 characters';
  if (!TAG.test(tag)) return 'Letters, digits, - _ . only; start and end with a letter or digit';
  return null;
}

export function SummaryTab({ vm, readOnly }: VmTabProps) {
  const trpc = useTRPC();
  const defaultContext = useDefaultContext();
  const manifest = useVmManifest(vm.namespace, vm.name, vm);
  const setTag = useMutation(trpc.vms.setTag.mutationOptions());
  const [newTag, setNewTag] = useState('');
  const problem = tagProblem(newTag);
  const migratable = liveMigratable(manifest.data);
  const agent = agentConnected(manifest.data);

  const addTag = () => {
    const tag = newTag.trim();
    if (!tag || problem) return;
    setTag.mutate({ ...vmRef(vm), tag, on: true }, { onSuccess: () => setNewTag('') });
  };

  return (
    <div className="grid-2">
      <section className="panel">
        <div className="panel-head">
          <h2>Status</h2>
        </div>
        <div className="panel-body">
          <dl className="kv">
            <dt>Status</dt>
            <dd style={{ display: 'flex', alignItems: 'center', gap: 7 }} data-testid="vm-status">
              <StatusDot status={vm.status} />
              {vm.status}
            </dd>
            {defaultContext && (
              <>
                <dt>Cluster</dt>
                <dd data-testid="vm-cluster">
                  {vm.context}
                  {vm.context === defaultContext ? ' (default)' : ''}
                </dd>
              </>
            )}
            <dt>Node</dt>
            <dd>
              {vm.node ? (
                <Link href={nodePageHref({ name: vm.node, context: vm.context }, defaultContext)}>{vm.node}</Link>
              ) : (
                '— (not running)'
              )}
            </dd>
            <dt>IP address</dt>
            <dd className="mono">{vm.ip || '—'}</dd>
            <dt>Live-migratable</dt>
            <dd>
              {migratable === undefined
                ? vm.running
                  ? 'unknown'
                  : '— (not running)'
                : migratable.ok
                  ? 'yes'
                  : `no: ${migratable.reason}`}
            </dd>
            <dt>Guest agent</dt>
            <dd>
              {agent === true || vm.os
                ? `connected${vm.os ? ` · ${vm.os}` : ''}`
                : agent === false
                  ? 'not connected'
                  : vm.running
                    ? 'not reported'
                    : '—'}
            </dd>
            <dt>Run strategy</dt>
            <dd>{vm.runStrategy}</dd>
          </dl>
        </div>
      </section>
      <section className="panel">
        <div className="panel-head">
          <h2>Configuration</h2>
        </div>
        <div className="panel-body">
          <dl className="kv">
            <dt>Namespace</dt>
            <dd>{vm.namespace}</dd>
            <dt>vCPUs</dt>
            <dd>{vm.cpu || (vm.instancetype ? `from ${vm.instancetype}` : '—')}</dd>
            <dt>Memory</dt>
            <dd>{vm.mem ? formatQuantity(vm.mem) : vm.instancetype ? `from ${vm.instancetype}` : '—'}</dd>
            <dt>Disk</dt>
            <dd>{vm.disk ? formatQuantity(vm.disk) : 'ephemeral (container disk)'}</dd>
            <dt>Instancetype</dt>
            <dd>{vm.instancetype || '—'}</dd>
            <dt>Preference</dt>
            <dd>{vm.preference || '—'}</dd>
            <dt>Proxmox vmid</dt>
            <dd>{vm.vmid}</dd>
            <dt>Created</dt>
            <dd>{vm.createdAt ? new Date(vm.createdAt).toLocaleString() : '—'}</dd>
          </dl>
        </div>
      </section>
      <section className="panel" aria-labelledby="tags-title">
        <div className="panel-head">
          <h2 id="tags-title">Tags</h2>
        </div>
        <div className="panel-body" style={{ display: 'flex', flexDirection: 'column', gap: 10 }}>
          <div className="chips" data-testid="vm-tags">
            {vm.tags.length === 0 && <span className="page-sub">No tags</span>}
            {vm.tags.map((t) => (
              <span key={t} className="tag">
                {t}
                {!readOnly && (
                  <button
                    type="button"
                    aria-label={`Remove tag ${t}`}
                    title={`Remove tag ${t}`}
                    disabled={setTag.isPending}
                    onClick={() => setTag.mutate({ ...vmRef(vm), tag: t, on: false })}
                  >
                    ×
                  </button>
                )}
              </span>
            ))}
          </div>
          {!readOnly && (
            <form
              style={{ display: 'flex', gap: 8, alignItems: 'flex-start' }}
              onSubmit={(e) => {
                e.preventDefault();
                addTag();
              }}
            >
              <div className="field" style={{ flex: 1 }}>
                <input
                  aria-label="New tag"
                  placeholder="Add a tag, e.g. prod"
                  value={newTag}
                  onChange={(e) => setNewTag(e.target.value)}
                  aria-invalid={problem ? true : undefined}
                  aria-describedby="tag-error"
                />
                <span id="tag-error" className="field-error">
                  {problem ?? (setTag.error ? setTag.error.message : '')}
                </span>
              </div>
              <button type="submit" disabled={!newTag.trim() || problem !== null || setTag.isPending}>
                Add tag
              </button>
            </form>
          )}
        </div>
      </section>
      <GuestInfoPanel vm={vm} agent={agent} />
      <VmCharts vm={vm} />
    </div>
  );
}
