'use client';
// The frame every page renders in: header, resource tree (a drawer on phones), workbench, tasks panel.
import { usePathname } from 'next/navigation';
import { useEffect, useState, type ReactNode } from 'react';
import { ClusterBanner } from './ClusterBanner';
import { Header } from './Header';
import { ResourceTree } from './ResourceTree';
import { TasksPanel } from './TasksPanel';

export function Shell({ children }: { children: ReactNode }) {
  const [drawer, setDrawer] = useState(false);
  const pathname = usePathname();
  useEffect(() => setDrawer(false), [pathname]);
  useEffect(() => {
    if (!drawer) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setDrawer(false);
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [drawer]);
  return (
    <div className="shell" data-drawer={drawer ? 'open' : 'closed'}>
      <a className="skip-link" href="#workbench">
        Skip to content
      </a>
      <Header onMenu={() => setDrawer((d) => !d)} drawerOpen={drawer} />
      <ResourceTree onNavigate={() => setDrawer(false)} />
      <div className="drawer-scrim" onClick={() => setDrawer(false)} aria-hidden />
      <main className="main" id="workbench" tabIndex={-1}>
        <ClusterBanner />
        {children}
      </main>
      <TasksPanel />
    </div>
  );
}
