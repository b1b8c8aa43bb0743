'use client';
// The Datacenter's Images page: the curated catalog, the custom sources (ConfigMap corral-sources) and the imported
// images (CDI DataVolumes) with add / remove / import and each import's live progress.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useFleet } from '../../lib/live';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { Logo } from '../create/Logo';
import { DataVolumesPanel } from './DataVolumesPanel';
import { SourcesPanel } from './SourcesPanel';

export function ImagesView() {
  const trpc = useTRPC();
  const session = useSession();
  // With several clusters the page shows one at a time (each has its own sources and DataVolumes): the default first.
  const { state } = useFleet();
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const context = picked ?? state.clusters[0]?.context;
  const images = useQuery(trpc.images.list.queryOptions(context ? { context } : undefined));
  const curated = (images.data ?? []).filter((i) => !i.custom);
  const readOnly = !session.loaded || session.readOnly;
  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Images</h1>
        <span className="page-sub">What new VMs boot from: the catalog, your own sources and imported disks</span>
        {state.clusters.length > 1 && (
          <>
            <span className="header-spacer" />
            <label htmlFor="images-cluster">Cluster</label>
            <select
              id="images-cluster"
              data-testid="images-cluster"
              value={context}
              onChange={(e) => setPicked(e.target.value)}
            >
              {state.clusters.map((c) => (
                <option key={c.context} value={c.context}>
                  {c.context}
                  {c.default ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </>
        )}
      </div>
      <SourcesPanel readOnly={readOnly} context={context} />
      <DataVolumesPanel
        readOnly={readOnly}
        context={context}
        defaultNamespace={session.capabilities?.defaultNamespace ?? 'tailvm'}
      />
      <section className="panel" aria-label="Catalog">
        <div className="panel-head">
          <h2>Catalog</h2>
          <span className="page-sub">curated containerdisks that boot as they are</span>
        </div>
        <div className="panel-body">
          {images.isError && <div className="inline-error">Could not load the catalog: {images.error.message}</div>}
          <div className="catalog" data-testid="images-catalog">
            {curated.map((img) => (
              <div key={img.name} className="catalog-card" data-image={img.name}>
                <Logo name={img.name} logo={img.logo} />
                <span>
                  <strong>{img.name}</strong>
                  <span className="desc">{img.description}</span>
                  <span className="desc mono">{img.containerDisk}</span>
                </span>
              </div>
            ))}
          </div>
          {!readOnly && (
            <p className="page-sub">
              <Link href="/create">Create a VM</Link> from any of these, a custom source or an imported disk.
            </p>
          )}
        </div>
      </section>
    </div>
  );
}
