'use client';
// Datacenter → Extensions: one card per extension in Corral's catalog (installed or available) with what it installs
// and needs; admins install or remove it behind a confirmation that lists the objects, then watch its task.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { ExtensionRow } from '@/server/schemas/extensions';
import { useTask } from '../../lib/live';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from '../vm/ActionDialog';
import { TaskProgress } from '../vm/SnapshotsTab';
import './extensions.css';

type Action = { kind: 'install' | 'remove'; ext: ExtensionRow };

export function ExtensionsView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const session = useSession();
  const list = useQuery(trpc.extensions.list.queryOptions());
  const [action, setAction] = useState<Action | null>(null);
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.extensions.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.capabilities.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.doctor.list.queryKey() }),
    ]);
  const install = useMutation(trpc.extensions.install.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.extensions.uninstall.mutationOptions({ onSettled: refresh }));
  const running = action?.kind === 'remove' ? remove : install;
  const task = useTask(running.data?.task ?? null);
  const rows = list.data ?? [];
  const canChange = !session.readOnly;
  const open = (a: Action) => {
    install.reset();
    remove.reset();
    setAction(a);
  };

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Extensions</h1>
        <span className="page-sub">
          {list.data
            ? `${rows.filter((r) => r.installed).length} installed · ${rows.filter((r) => !r.installed).length} available`
            : 'Reading the catalog…'}
        </span>
      </div>
      {list.isError && <div className="inline-error">Could not read the extensions: {list.error.message}</div>}
      <div className="ext-grid">
        {rows.map((r) => (
          <section
            key={r.name}
            className="panel ext-card"
            data-extension={r.name}
            data-installed={r.installed}
            aria-labelledby={`ext-${r.name}`}
          >
            <div className="panel-head">
              <h2 id={`ext-${r.name}`}>{r.name}</h2>
              <span className="page-sub mono">v{r.installedVersion ?? r.version}</span>
              <span className="header-spacer" />
              <span className={`ext-state ${r.installed ? 'ext-installed' : ''}`}>
                {r.installed ? 'Installed' : 'Available'}
              </span>
            </div>
            <div className="panel-body">
              <p className="ext-desc">{r.description}</p>
              {r.installs.length > 0 && (
                <>
                  <h3>Installs</h3>
                  <ul>
                    {r.installs.map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                </>
              )}
              {r.needs.length > 0 && (
                <>
                  <h3>Needs</h3>
                  <ul>
                    {r.needs.map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                </>
              )}
              {r.installedAt && <p className="page-sub">Installed {new Date(r.installedAt).toLocaleString()}</p>}
              {canChange && (
                <div className="ext-actions">
                  {r.installed ? (
                    <button type="button" className="btn" onClick={() => open({ kind: 'remove', ext: r })}>
                      Remove
                    </button>
                  ) : (
                    <button type="button" className="btn btn-primary" onClick={() => open({ kind: 'install', ext: r })}>
                      Install
                    </button>
                  )}
                </div>
              )}
            </div>
          </section>
        ))}
      </div>
      <ActionDialog
        title={action ? `${action.kind === 'install' ? 'Install' : 'Remove'} ${action.ext.name}` : ''}
        open={action !== null}
        onClose={() => setAction(null)}
        label={action?.kind === 'remove' ? 'Remove' : 'Install'}
        busyLabel={action?.kind === 'remove' ? 'Removing…' : 'Installing…'}
        busy={running.isPending}
        error={running.error}
        danger={action?.kind === 'remove'}
        done={running.isSuccess}
        onConfirm={() => {
          if (!action) return;
          if (action.kind === 'install') install.mutate({ name: action.ext.name });
          else remove.mutate({ name: action.ext.name });
        }}
        after={
          running.isSuccess && (
            <div data-testid="extension-progress">
              {task ? (
                <TaskProgress task={task} />
              ) : (
                <span className="page-sub">Task {running.data.task} started…</span>
              )}
              <ul className="ext-left" data-testid="extension-changes">
                {(install.data?.applied ?? remove.data?.removed ?? []).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
              {remove.data && remove.data.left.length > 0 && (
                <ul className="ext-left">
                  {remove.data.left.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              )}
            </div>
          )
        }
      >
        {action?.kind === 'install' ? (
          <p>This applies to the cluster (server-side apply, labelled corral.dev/extension={action.ext.name}):</p>
        ) : (
          <p>
            This deletes every object labelled corral.dev/extension={action?.ext.name}; objects edited by hand that lost
            the label stay:
          </p>
        )}
        <ul>
          {action?.ext.installs.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      </ActionDialog>
    </div>
  );
}
