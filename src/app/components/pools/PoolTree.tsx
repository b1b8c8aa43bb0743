'use client';
// The resource tree's Pool view: pools nested by path, each a drop target for VM and CT rows (HTML5 drag and
// drop: a drop files the guest at once, leaving its old pool), their members, and the guests in no pool. Every
// row also has a "Move to pool…" button, the keyboard way of the same move. New pools are made here; rename and
// delete live on the pool page.
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useState, type DragEvent, type FormEvent } from 'react';
import { useSession } from '../../lib/session';
import { StatusDot } from '../StatusDot';
import { MoveToPoolDialog } from './MoveToPoolDialog';
import {
  dragGuest,
  draggedRef,
  DRAG_TYPE,
  memberHref,
  poolHref,
  useFolders,
  usePoolWrites,
  type Member,
} from './use-folders';
import './pools.css';

function GuestItem({
  m,
  depth,
  readOnly,
  onMove,
  onNavigate,
}: {
  m: Member;
  depth: number;
  readOnly: boolean;
  onMove: (m: Member) => void;
  onNavigate: () => void;
}) {
  const pathname = usePathname();
  const href = memberHref(m);
  return (
    <li className="pool-guest" data-guest={`${m.namespace}/${m.name}`}>
      {m.missing ? (
        <span className="tree-item pool-missing" style={{ paddingLeft: 14 + depth * 14 }} title={m.reason}>
          <span className="icon" aria-hidden>
            ?
          </span>
          <span className="label">{m.name || m.ref}</span>
          <span className="count">missing</span>
        </span>
      ) : (
        <Link
          href={href}
          className="tree-item"
          style={{ paddingLeft: 14 + depth * 14 }}
          draggable={!readOnly}
          onDragStart={(e) => dragGuest(e, m)}
          aria-current={pathname === href ? 'page' : undefined}
          title={`${m.type.toUpperCase()} ${m.namespace}/${m.name} — ${m.status}${readOnly ? '' : ' (drag onto a pool)'}`}
          onClick={onNavigate}
        >
          <StatusDot status={m.status} />
          {m.type === 'ct' && (
            <span className="icon" aria-label="Container" role="img">
              ⬡
            </span>
          )}
          <span className="label">{m.name}</span>
          <span className="count">{m.namespace}</span>
        </Link>
      )}
      {!readOnly && (
        <button
          type="button"
          className="pool-move-btn"
          aria-label={`Move ${m.name || m.ref} to pool…`}
          title="Move to pool…"
          onClick={() => onMove(m)}
        >
          ⇄
        </button>
      )}
    </li>
  );
}

export function PoolTree({ onNavigate }: { onNavigate: () => void }) {
  const folders = useFolders();
  const writes = usePoolWrites();
  const session = useSession();
  const readOnly = session.readOnly;
  const [over, setOver] = useState<string | null>(null);
  const [moving, setMoving] = useState<Member | null>(null);
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const listing = folders.data;

  const drop = (path: string) => async (e: DragEvent) => {
    e.preventDefault();
    setOver(null);
    const ref = draggedRef(e);
    if (!ref) return;
    setError('');
    try {
      await writes.place(listing, ref, path);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const dragOver = (path: string) => (e: DragEvent) => {
    if (readOnly || !e.dataTransfer.types.includes(DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    setOver(path);
  };
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      await writes.create.mutateAsync({ path: name.trim() });
      setName('');
      setNaming(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <div className="pool-tree" data-testid="pool-tree">
      <div className="tree-group-title pool-title">
        <span>Pools</span>
        {!readOnly && (
          <button type="button" className="btn-small" onClick={() => setNaming((v) => !v)} aria-expanded={naming}>
            + New pool
          </button>
        )}
      </div>
      {naming && (
        <form className="pool-new" onSubmit={(e) => void create(e)}>
          <input
            autoFocus
            aria-label="New pool path"
            placeholder="apps or apps/web (nest with /)"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <button type="submit" className="btn-small btn-primary" disabled={!name.trim() || writes.create.isPending}>
            Create
          </button>
        </form>
      )}
      {error && (
        <div className="tree-more result-err" role="alert">
          {error}
        </div>
      )}
      {folders.isError && <div className="tree-more result-err">Pools could not be read: {folders.error.message}</div>}
      {listing && listing.folders.length === 0 && (
        <div className="tree-more">No pools yet{readOnly ? '' : ': make one, then drag guests onto it'}</div>
      )}
      <ul>
        {listing?.folders.map((f) => (
          <li key={f.path}>
            <div
              className={`pool-drop${over === f.path ? ' pool-over' : ''}`}
              data-pool={f.path}
              onDragOver={dragOver(f.path)}
              onDragLeave={() => setOver((o) => (o === f.path ? null : o))}
              onDrop={(e) => void drop(f.path)(e)}
            >
              <Link
                href={poolHref(f.path)}
                className="tree-item"
                style={{ paddingLeft: 4 + (f.depth - 1) * 14 }}
                title={f.comment || f.path}
                onClick={onNavigate}
              >
                <span className="icon" aria-hidden>
                  ▤
                </span>
                <span className="label">{f.name}</span>
                <span className="count">
                  {f.usage.running}/{f.usage.instances + f.usage.missing}
                </span>
              </Link>
            </div>
            {f.members.length > 0 && (
              <ul>
                {f.members.map((m) => (
                  <GuestItem
                    key={m.ref}
                    m={m}
                    depth={f.depth}
                    readOnly={readOnly}
                    onMove={setMoving}
                    onNavigate={onNavigate}
                  />
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
      <div
        className={`tree-group-title pool-drop${over === '' ? ' pool-over' : ''}`}
        data-pool=""
        onDragOver={dragOver('')}
        onDragLeave={() => setOver((o) => (o === '' ? null : o))}
        onDrop={(e) => void drop('')(e)}
      >
        Not in a pool {listing ? `(${listing.unfoldered.length})` : ''}
      </div>
      <ul data-testid="unfoldered">
        {listing?.unfoldered.slice(0, 200).map((m) => (
          <GuestItem key={m.ref} m={m} depth={0} readOnly={readOnly} onMove={setMoving} onNavigate={onNavigate} />
        ))}
        {listing && listing.unfoldered.length > 200 && (
          <li className="tree-more">+{listing.unfoldered.length - 200} more, not listed here</li>
        )}
      </ul>
      <MoveToPoolDialog listing={listing} member={moving} onClose={() => setMoving(null)} />
    </div>
  );
}
