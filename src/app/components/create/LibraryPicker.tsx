'use client';
// The wizard's Image library tab (GET /api/datavolumes): imported and uploaded disks, cloned as the new VM's root
// disk (source `dataVolume`), and ISOs, attached as its install media beside a blank disk (`isoDataVolume`). Both
// must be in the VM's namespace, so picking one sets it. Images still importing are shown, not pickable, with why.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { DataVolumeRow } from '@/server/schemas/images';
import { useTRPC } from '../../lib/trpc';

const DISC = (
  <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden>
    <circle cx="16" cy="16" r="11" fill="none" stroke="#fff" strokeWidth="2.5" />
    <circle cx="16" cy="16" r="3" fill="#fff" />
  </svg>
);
const DRIVE = (
  <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden>
    <rect x="5" y="9" width="22" height="14" rx="2.5" fill="none" stroke="#fff" strokeWidth="2.5" />
    <circle cx="22" cy="16" r="1.8" fill="#fff" />
  </svg>
);

function notReady(r: DataVolumeRow): string | null {
  if (r.phase === 'Succeeded') return null;
  if (r.error) return `${r.phase}: ${r.error}`;
  return r.progress !== null ? `${r.phase} ${Math.round(r.progress)}%` : r.phase;
}

function Group({
  kind,
  rows,
  selected,
  onPick,
  onChoose,
}: {
  kind: 'disk' | 'iso';
  rows: DataVolumeRow[];
  selected: string;
  onPick: (row: DataVolumeRow) => void;
  onChoose: (row: DataVolumeRow) => void;
}) {
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 6 }}>
      <h3 className="field-label" style={{ margin: 0 }}>
        {kind === 'disk' ? 'Disks — cloned as the root disk' : 'ISOs — install media, booted first, with a blank disk'}
      </h3>
      <div className="catalog" data-testid={`library-${kind}`}>
        {rows.map((r) => {
          const why = notReady(r);
          const key = `${r.namespace}/${r.name}`;
          return (
            <button
              key={key}
              type="button"
              className="catalog-card"
              aria-pressed={selected === key}
              disabled={why !== null}
              title={why ? `Not ready: ${why}` : undefined}
              data-library={r.name}
              data-kind={kind}
              onClick={() => onPick(r)}
              onDoubleClick={() => onChoose(r)}
            >
              <span className="logo" style={{ background: kind === 'iso' ? '#6d5bd0' : '#3b6e8f' }} aria-hidden>
                {kind === 'iso' ? DISC : DRIVE}
              </span>
              <span>
                <strong>{r.name}</strong>
                <span className="desc">
                  {r.namespace} · {r.size}
                  {r.source === 'upload' ? ' · uploaded' : ''}
                </span>
                {why && <span className="tag">{why}</span>}
              </span>
            </button>
          );
        })}
        {rows.length === 0 && (
          <span className="page-sub">{kind === 'disk' ? 'No disk images yet.' : 'No ISOs yet.'}</span>
        )}
      </div>
    </div>
  );
}

/** `selected` is `namespace/name` of the picked image ('' for none). */
export function LibraryPicker({
  context,
  selected,
  onPick,
  onChoose,
}: {
  /** The cluster whose imported images are listed (absent: the default one). */
  context?: string;
  selected: string;
  onPick: (row: DataVolumeRow) => void;
  /** Double-click: pick and go on to the configuration. */
  onChoose: (row: DataVolumeRow) => void;
}) {
  const trpc = useTRPC();
  const list = useQuery(trpc.dataVolumes.list.queryOptions(context ? { context } : undefined));
  if (list.isError) return <div className="inline-error">Could not load the image library: {list.error.message}</div>;
  if (!list.isSuccess) return <span className="page-sub">Loading the image library…</span>;
  const rows = list.data;
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 12 }} data-testid="library">
      <Group
        kind="disk"
        rows={rows.filter((r) => r.contentType === 'disk')}
        selected={selected}
        onPick={onPick}
        onChoose={onChoose}
      />
      <Group
        kind="iso"
        rows={rows.filter((r) => r.contentType === 'iso')}
        selected={selected}
        onPick={onPick}
        onChoose={onChoose}
      />
      <span className="page-sub">
        Import from a URL or upload from this computer on the <Link href="/images">Images page</Link>.
      </span>
    </div>
  );
}
