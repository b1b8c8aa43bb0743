'use client';
// The wizard's imported images (Images page, GET /api/datavolumes): finished disks to clone as the root disk (the
// `pvc` source, in the image's namespace), and ISOs whose URL becomes the install media of the new VM.
import { useQuery } from '@tanstack/react-query';
import type { DataVolumeRow } from '@/server/schemas/images';
import { useTRPC } from '../../lib/trpc';

export function ImportedPicker({
  kind,
  selected,
  onPick,
}: {
  kind: 'disk' | 'iso';
  selected: string;
  onPick: (row: DataVolumeRow) => void;
}) {
  const trpc = useTRPC();
  const list = useQuery(trpc.dataVolumes.list.queryOptions());
  const rows = (list.data ?? []).filter(
    (r) => r.contentType === kind && r.phase === 'Succeeded' && (kind === 'disk' || /^https?:/.test(r.source)),
  );
  if (!list.isSuccess || rows.length === 0) return null;
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 6 }}>
      <span className="page-sub">
        {kind === 'disk'
          ? 'Imported disks — the new VM gets a clone in the image’s namespace:'
          : 'Imported ISOs — the new VM imports its own copy from the same URL:'}
      </span>
      <div className="catalog" data-testid={`imported-${kind}`}>
        {rows.map((r) => {
          const value = kind === 'disk' ? r.name : r.source;
          return (
            <button
              key={`${r.namespace}/${r.name}`}
              type="button"
              className="catalog-card"
              aria-pressed={selected === value}
              data-imported={r.name}
              onClick={() => onPick(r)}
            >
              <span>
                <strong>{r.name}</strong>
                <span className="desc">
                  {r.namespace} · {r.size}
                </span>
              </span>
            </button>
          );
        })}
      </div>
    </div>
  );
}
