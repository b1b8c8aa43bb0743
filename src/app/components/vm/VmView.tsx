'use client';
// The VM page: header with status, the action toolbar (hidden for read-only callers), and the tab list.
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, useSearchParams } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { useDefaultContext, useFleet, useNodes, useVm } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useSession } from '../../lib/session';
import { actionState, type VmAction } from '../../lib/status';
import { useTRPC } from '../../lib/trpc';
import { agentConnected, liveMigratable, useVmManifest } from '../../lib/vm-manifest';
import { StatusDot } from '../StatusDot';
import { DeleteDialog } from './DeleteDialog';
import { MigrateDialog } from './MigrateDialog';
import { MoreMenu } from './MoreMenu';
import { DEFAULT_TAB, VM_TABS } from './tabs';
import { contextOfSearch, vmPageHref, vmRef } from '../../lib/cluster-links';

const BUTTONS: { action: Exclude<VmAction, 'migrate'>; label: string }[] = [
  { action: 'start', label: 'Start' },
  { action: 'stop', label: 'Stop' },
  { action: 'restart', label: 'Restart' },
  { action: 'pause', label: 'Pause' },
  { action: 'unpause', label: 'Resume' },
];

export function VmView() {
  const params = useParams<{ ns: string; name: string }>();
  const namespace = decodeURIComponent(params.ns);
  const name = decodeURIComponent(params.name);
  const search = useSearchParams();
  const { synced } = useFleet();
  // `?context=lab`: a VM of another cluster than the default (docs/multi-cluster.md); today's URLs stay the default's.
  const context = contextOfSearch(search);
  const defaultContext = useDefaultContext();
  const vm = useVm(namespace, name, context);
  const session = useSession();
  // At phone width the tab strip scrolls sideways: keep the selected tab in view.
  const tabList = useRef<HTMLDivElement>(null);
  const tabParam = search.get('tab');
  const found = vm !== undefined;
  useEffect(() => {
    tabList.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [tabParam, found]);

  if (!vm) {
    return (
      <div className="workbench">
        {synced ? (
          <div className="panel empty" data-testid="vm-missing">
            <h2>
              No VM {namespace}/{name}
              {context ? ` on ${context}` : ''}
            </h2>
            <p>It does not exist (yet, or any more). This page updates by itself if it appears.</p>
            <Link href="/" className="btn">
              Back to Datacenter
            </Link>
          </div>
        ) : (
          <div className="skeleton">Loading…</div>
        )}
      </div>
    );
  }
  const visible = VM_TABS.filter((t) => t.visible?.(vm) ?? true);
  const tabId = search.get('tab') ?? DEFAULT_TAB;
  const tab = visible.find((t) => t.id === tabId) ?? visible[0];

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>
          <StatusDot status={vm.status} />
          {vm.name}
        </h1>
        <span className="page-sub" data-testid="vm-sub">
          {defaultContext && vm.context ? `${vm.context} · ` : ''}
          {vm.namespace} · {vm.status}
          {vm.node ? ` on ${vm.node}` : ''}
        </span>
        <span className="header-spacer" />
        {!session.readOnly && <VmToolbar vm={vm} />}
      </div>
      <div className="tabs" role="tablist" aria-label="VM views" ref={tabList}>
        {visible.map((t) => (
          <Link
            key={t.id}
            role="tab"
            href={vmPageHref(vm, defaultContext, t.id)}
            aria-selected={t.id === tab?.id}
            replace
            scroll={false}
          >
            {t.label}
          </Link>
        ))}
      </div>
      <div role="tabpanel" aria-label={tab?.label}>
        {tab && <tab.Component vm={vm} readOnly={session.readOnly} />}
      </div>
    </div>
  );
}

function VmToolbar({ vm }: { vm: VmRow }) {
  const trpc = useTRPC();
  const session = useSession();
  const nodes = useNodes();
  const manifest = useVmManifest(vm.namespace, vm.name, vm);
  const act = useMutation(trpc.vms.action.mutationOptions());
  const [dialog, setDialog] = useState<'migrate' | 'delete' | null>(null);
  const facts = {
    status: vm.status,
    running: vm.running,
    liveMigratable: liveMigratable(manifest.data),
    otherReadyNodes: nodes.filter((n) => n.context === vm.context && n.ready && n.schedulable && n.name !== vm.node)
      .length,
  };
  const migrate = actionState('migrate', facts);
  return (
    <div className="toolbar" role="toolbar" aria-label="VM actions" data-testid="vm-toolbar">
      {BUTTONS.map(({ action, label }) => {
        const s = actionState(action, facts);
        const pending = act.isPending && act.variables.action === action;
        return (
          <button
            key={action}
            type="button"
            disabled={!s.enabled || act.isPending}
            title={s.enabled ? `${label} ${vm.name}` : `${label}: ${s.reason}`}
            onClick={() => act.mutate({ ...vmRef(vm), action })}
          >
            {pending ? `${label}…` : label}
          </button>
        );
      })}
      <span className="sep" aria-hidden />
      <button
        type="button"
        disabled={!migrate.enabled}
        title={
          !migrate.enabled
            ? `Migrate: ${migrate.reason}`
            : vm.running
              ? `Live-migrate ${vm.name} to another node`
              : `Move the stopped ${vm.name} to another node (it starts there)`
        }
        onClick={() => setDialog('migrate')}
      >
        Migrate
      </button>
      <MoreMenu
        vm={vm}
        facts={{
          status: vm.status,
          running: vm.running,
          template: vm.template,
          hasDisk: vm.disk !== '',
          canSnapshot: session.capabilities?.canSnapshot,
          agent: agentConnected(manifest.data),
        }}
      />
      <button
        type="button"
        className="btn-danger"
        title={`Delete ${vm.name} and its disks`}
        onClick={() => setDialog('delete')}
      >
        Delete
      </button>
      {act.error && (
        <span className="field-error" role="alert" style={{ flexBasis: '100%' }}>
          {act.variables?.action}: {act.error.message}
        </span>
      )}
      <MigrateDialog vm={vm} open={dialog === 'migrate'} onClose={() => setDialog(null)} />
      <DeleteDialog vm={vm} open={dialog === 'delete'} onClose={() => setDialog(null)} />
    </div>
  );
}
