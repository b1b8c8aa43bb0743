'use client';
import Link from 'next/link';
import { useState } from 'react';
import { useLive } from '../lib/live';
import { useSession } from '../lib/session';
import { CreateCtDialog } from './ct/CreateCtDialog';
import { HealthBadge } from './health/HealthBadge';
import { ThemeToggle } from './ThemeToggle';

export function Header({ onMenu, drawerOpen }: { onMenu: () => void; drawerOpen: boolean }) {
  const session = useSession();
  const { link } = useLive();
  const [creatingCt, setCreatingCt] = useState(false);
  return (
    <header className="header">
      <button
        type="button"
        className="btn-ghost menu-button"
        onClick={onMenu}
        aria-label="Resource tree"
        aria-expanded={drawerOpen}
        aria-controls="resource-tree"
      >
        ☰
      </button>
      <Link href="/" className="brand" aria-label="Corral — Datacenter">
        <span className="brand-mark" aria-hidden>
          C
        </span>
        <span>Corral</span>
      </Link>
      {session.demo && (
        <span className="badge badge-demo" title="This is Corral's embedded simulated cluster, not a real one">
          demo<span className="hide-phone"> cluster</span>
        </span>
      )}
      <LinkBadge link={link} />
      <HealthBadge />
      <span className="header-spacer" />
      {session.loaded && (
        <span
          className="caller hide-phone"
          title={session.login ? `Signed in as ${session.login}` : 'No identity header: single-user mode'}
        >
          {session.name || session.login || 'local user'}
        </span>
      )}
      {session.loaded && session.readOnly && (
        <span
          className="badge badge-readonly"
          data-testid="readonly-badge"
          title={
            session.readOnlyReason ??
            `CORRAL_ADMINS is set and ${session.login || 'this caller'} is not on it: changes are disabled`
          }
        >
          read-only
        </span>
      )}
      <Link href="/multiview" className="btn btn-ghost hide-phone" title="Live screens of running VMs">
        Multiview
      </Link>
      <ThemeToggle />
      {!session.readOnly && (
        <>
          <button type="button" className="btn" aria-label="Create CT" onClick={() => setCreatingCt(true)}>
            + <span className="hide-phone">Create </span>CT
          </button>
          <CreateCtDialog open={creatingCt} onClose={() => setCreatingCt(false)} />
        </>
      )}
      {!session.readOnly && (
        <Link href="/create" className="btn btn-primary" aria-label="Create VM">
          + <span className="hide-phone">Create </span>VM
        </Link>
      )}
    </header>
  );
}

function LinkBadge({ link }: { link: string }) {
  if (link === 'live')
    return (
      <span className="badge badge-live hide-phone" title="Changes in the cluster appear here as they happen">
        ● live
      </span>
    );
  if (link === 'reconnecting' || link === 'failed')
    return (
      <span className="badge badge-reconnecting" role="status" data-testid="reconnecting">
        reconnecting…
      </span>
    );
  return (
    <span className="badge" role="status">
      connecting…
    </span>
  );
}
