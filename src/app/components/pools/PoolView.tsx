'use client';
// A pool's page (/pools?path=…): its aggregate usage, a power action fanned out over every member of the pool and
// its sub-pools with a result per member, the members' table (Move to pool…, Remove), and rename/delete. The
// path travels in the query string because a nested path holds slashes.
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { FolderActionOutput } from '@/server/schemas/pools';
import { useSession } from '../../lib/session';
import { Modal } from '../Modal';
import { StatusDot } from '../StatusDot';
import { ActionDialog } from '../vm/ActionDialog';
import { MoveToPoolDialog } from './MoveToPoolDialog';
import { formatBytes, memberHref, poolHref, useFolders, usePoolWrites, type Member } from './use-folders';
import './pools.css';

const ACTIONS = ['start', 'stop', 'restart', 'pause', 'resume'] as const;
const title = (a: string) => a[0]!.toUpperCase() + a.slice(1);
const within = (p: string, root: string) => p === root || p.startsWith(`${root}/`);

export function PoolView({ path }: { path: string }) {
  const folders = useFolders();
  const writes = usePoolWrites();
  const session = useSession();
  const router = useRouter();
  const [results, setResults] = useState<FolderActionOutput | null>(null);
  const [moving, setMoving] = useState<Member | null>(null);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState('');
  const listing = folders.data;
  const folder = listing?.folders.find((f) => f.path === path);

  if (folders.isPending) return <div className="skeleton workbench">Loading pools…</div>;
  if (!folder)
    return (
      <div className="workbench">
        <div className="panel empty">
          <h2>No pool “{path}”</h2>
          <p>It may have been renamed or deleted.</p>
          <Link href="/">Back to the Datacenter</Link>
        </div>
      </div>
    );

  const subtree = listing!.folders.filter((f) => within(f.path, path));
  const rows = subtree.flatMap((f) => f.members.map((m) => ({ pool: f.path, m })));
  const usage = subtree.reduce(
    (u, f) => ({
      instances: u.instances + f.usage.instances,
      running: u.running + f.usage.running,
      missing: u.missing + f.usage.missing,
      cpus: u.cpus + f.usage.cpus,
      memoryBytes: u.memoryBytes + f.usage.memoryBytes,
      cpuUsedCores: u.cpuUsedCores + f.usage.cpuUsedCores,
      memoryUsedBytes: u.memoryUsedBytes + f.usage.memoryUsedBytes,
    }),
    { instances: 0, running: 0, missing: 0, cpus: 0, memoryBytes: 0, cpuUsedCores: 0, memoryUsedBytes: 0 },
  );
  const readOnly = session.readOnly;
  const run = async (action: (typeof ACTIONS)[number]) => {
    setError('');
    try {
      setResults(await writes.action.mutateAsync({ path, action }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const rename = async () => {
    if (renaming === null) return;
    setError('');
    try {
      await writes.move.mutateAsync({ from: path, to: renaming.trim() });
      const to = renaming.trim();
      setRenaming(null);
      router.push(poolHref(to));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <div className="workbench" data-testid="pool-page">
      <div className="page-head">
        <h1>
          <span className="page-sub">Pool</span> {folder.path}
        </h1>
        {folder.comment && <span className="page-sub">{folder.comment}</span>}
        {!readOnly && (
          <span className="pool-head-actions">
            <button type="button" className="btn-small" onClick={() => setRenaming(folder.path)}>
              Rename / move…
            </button>
            <button type="button" className="btn-small btn-danger" onClick={() => setDeleting(true)}>
              Delete pool…
            </button>
          </span>
        )}
      </div>
      <div className="cards" data-testid="pool-usage">
        <div className="card">
          <div className="card-label">Members</div>
          <div className="card-value">
            {usage.instances}
            {usage.missing > 0 && <small> + {usage.missing} missing</small>}
          </div>
        </div>
        <div className="card">
          <div className="card-label">Running</div>
          <div className="card-value" data-testid="pool-running">
            {usage.running} <small>/ {usage.instances}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">CPU</div>
          <div className="card-value">
            {usage.cpuUsedCores.toFixed(2)} <small>/ {usage.cpus}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">Memory</div>
          <div className="card-value">
            {formatBytes(usage.memoryUsedBytes)} <small>/ {formatBytes(usage.memoryBytes)}</small>
          </div>
        </div>
        <div className="card">
          <div className="card-label">Sub-pools</div>
          <div className="card-value">{subtree.length - 1}</div>
        </div>
      </div>

      <section className="panel" aria-labelledby="pool-members-title">
        <div className="panel-head">
          <h2 id="pool-members-title">Members of {folder.name} and its sub-pools</h2>
          {!readOnly && (
            <div className="bulk-bar" data-testid="pool-actions">
              {ACTIONS.map((a) => (
                <button
                  key={a}
                  type="button"
                  className="btn-small"
                  disabled={rows.length === 0 || writes.action.isPending}
                  title={`${title(a)} every member (CTs skip pause and resume)`}
                  onClick={() => void run(a)}
                >
                  {title(a)}
                </button>
              ))}
            </div>
          )}
        </div>
        {error && (
          <p className="result-err pool-error" role="alert">
            {error}
          </p>
        )}
        {rows.length === 0 ? (
          <div className="empty">
            <p>No members yet. Drag a VM or CT onto this pool in the tree’s Pool view, or use Move to pool….</p>
          </div>
        ) : (
          <div className="table-scroll">
            <table className="data-table" data-testid="pool-members">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Status</th>
                  <th>Namespace</th>
                  <th>Node</th>
                  <th>CPU</th>
                  <th>Memory</th>
                  <th>Pool</th>
                  {!readOnly && <th aria-label="Actions" />}
                </tr>
              </thead>
              <tbody>
                {rows.map(({ pool, m }) => (
                  <tr key={m.ref} data-member={m.name}>
                    <td>
                      {m.missing ? (
                        <span title={m.reason}>{m.name || m.ref}</span>
                      ) : (
                        <Link href={memberHref(m)}>{m.name}</Link>
                      )}
                    </td>
                    <td>{m.type ? m.type.toUpperCase() : '—'}</td>
                    <td>
                      <StatusDot status={m.status} /> {m.missing ? <span title={m.reason}>missing</span> : m.status}
                    </td>
                    <td>{m.namespace}</td>
                    <td>{m.node || '—'}</td>
                    <td>{m.cpu || '—'}</td>
                    <td>{m.mem || '—'}</td>
                    <td>{pool === path ? '—' : <Link href={poolHref(pool)}>{pool.slice(path.length + 1)}</Link>}</td>
                    {!readOnly && (
                      <td className="pool-row-actions">
                        <button type="button" className="btn-small" onClick={() => setMoving(m)}>
                          Move to pool…
                        </button>
                        <button
                          type="button"
                          className="btn-small btn-ghost"
                          onClick={() => void writes.removeMember.mutateAsync({ ref: m.ref }).catch(() => undefined)}
                        >
                          Remove
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {results && (
          <div role="status" data-testid="pool-results">
            <div className="panel-head">
              <h2>
                {title(results.action)}: {results.ok} ok, {results.skipped} skipped, {results.failed} failed
              </h2>
              <button type="button" className="btn-small btn-ghost" onClick={() => setResults(null)}>
                Dismiss
              </button>
            </div>
            <ul className="results">
              {results.results.map((r) => (
                <li key={r.ref} data-result={r.name || r.ref}>
                  <span className={r.status === 'failed' ? 'result-err' : r.status === 'ok' ? 'result-ok' : 'page-sub'}>
                    {r.status === 'ok' ? '✓' : r.status === 'failed' ? '✗' : '–'}
                  </span>
                  <span className="page-sub">{r.type ? r.type.toUpperCase() : '?'}</span>
                  <span className="mono">
                    {r.namespace}/{r.name}
                  </span>
                  <span className={r.status === 'failed' ? 'result-err' : 'page-sub'}>
                    {r.status}
                    {r.reason ? `: ${r.reason}` : ''}
                    {r.error ? `: ${r.error}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        )}
      </section>

      <MoveToPoolDialog listing={listing} member={moving} onClose={() => setMoving(null)} />
      <Modal
        title={`Rename or move ${folder.path}`}
        open={renaming !== null}
        onClose={() => setRenaming(null)}
        footer={
          <>
            <button type="button" onClick={() => setRenaming(null)}>
              Cancel
            </button>
            <button
              type="button"
              className="btn-primary"
              disabled={!renaming?.trim() || renaming.trim() === path || writes.move.isPending}
              onClick={() => void rename()}
            >
              Move
            </button>
          </>
        }
      >
        <label className="pool-field">
          New path (its sub-pools and members come along)
          <input value={renaming ?? ''} onChange={(e) => setRenaming(e.target.value)} aria-label="New path" />
        </label>
        {error && <p className="result-err">{error}</p>}
      </Modal>
      <ActionDialog
        title={`Delete pool ${folder.path}`}
        open={deleting}
        onClose={() => setDeleting(false)}
        label="Delete pool"
        busyLabel="Deleting…"
        busy={writes.remove.isPending}
        error={writes.remove.error}
        danger
        onConfirm={() =>
          void writes.remove.mutateAsync({ path }).then(() => {
            setDeleting(false);
            router.push('/');
          })
        }
      >
        <p>
          Deletes {folder.path} and its {subtree.length - 1} sub-pool(s). Their {rows.length} member(s) leave the pool;
          no VM or CT is stopped or deleted.
        </p>
      </ActionDialog>
    </div>
  );
}
