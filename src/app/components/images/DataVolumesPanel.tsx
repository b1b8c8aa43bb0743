'use client';
// Imported images (CDI DataVolumes that belong to no VM): import from an http(s) URL with the DataVolume's live
// progress, upload a file (UploadImageForm), delete. The list is re-read every second while an import runs, every 10 s otherwise.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import type { DataVolumeRow } from '@/server/schemas/images';
import { useTRPC } from '../../lib/trpc';
import { fieldErrors, nameProblem } from '../../lib/validation';
import { UploadImageForm } from './UploadImageForm';
import { inContext } from '../../lib/cluster-links';

const FIELDS = ['name', 'namespace', 'url', 'size', 'contentType'] as const;
type Field = (typeof FIELDS)[number];

const importing = (r: DataVolumeRow) => r.phase !== 'Succeeded' && r.phase !== 'Failed';

function phaseClass(r: DataVolumeRow): string {
  if (r.phase === 'Failed' || r.error) return 'status-error';
  if (r.phase === 'Succeeded') return 'status-done';
  return 'status-running';
}

/** `context`: the cluster whose DataVolumes are shown, imported, uploaded and deleted (absent: the default one). */
export function DataVolumesPanel({
  readOnly,
  defaultNamespace,
  context,
}: {
  readOnly: boolean;
  defaultNamespace: string;
  context?: string;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(
    trpc.dataVolumes.list.queryOptions(context ? { context } : undefined, {
      refetchInterval: (q) => ((q.state.data ?? []).some(importing) ? 1000 : 10_000),
    }),
  );
  const [form, setForm] = useState({ name: '', namespace: '', url: '', size: '10Gi' });
  const [errors, setErrors] = useState<{ byField: Partial<Record<Field, string>>; general: string[] }>({
    byField: {},
    general: [],
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.dataVolumes.list.queryKey() });
  const create = useMutation(
    trpc.dataVolumes.create.mutationOptions({
      onSuccess: () => {
        setForm((f) => ({ ...f, name: '', url: '' }));
        setErrors({ byField: {}, general: [] });
        void refresh();
      },
      onError: (err) => setErrors(fieldErrors(err.message, FIELDS)),
    }),
  );
  const remove = useMutation(trpc.dataVolumes.delete.mutationOptions({ onSettled: () => void refresh() }));
  const localName = form.name ? nameProblem(form.name) : null;
  const rows = list.data ?? [];
  const field = (id: Field, label: string, input: ReactNode, error?: string | null) => (
    <div className="field">
      <label htmlFor={`dv-${id}`}>{label}</label>
      {input}
      {error && (
        <span className="field-error" role="alert" data-testid={`error-dv-${id}`}>
          {error}
        </span>
      )}
    </div>
  );
  return (
    <section className="panel" aria-label="Imported images">
      <div className="panel-head">
        <h2>Imported images</h2>
        <span className="page-sub">DataVolumes imported by CDI; a VM clones one as its root disk</span>
      </div>
      {list.isError && (
        <div className="panel-body">
          <div className="inline-error">Could not load the imported images: {list.error.message}</div>
        </div>
      )}
      <div className="table-scroll">
        <table className="data-table" data-testid="datavolumes-table">
          <thead>
            <tr>
              <th>Name</th>
              <th className="hide-phone">Namespace</th>
              <th>Phase</th>
              <th className="num hide-phone">Size</th>
              <th className="hide-phone">Source</th>
              {!readOnly && (
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.namespace}/${r.name}`} data-datavolume={r.name} data-phase={r.phase}>
                <td>
                  <span className="mono">{r.name}</span>
                  {r.contentType === 'iso' && <span className="tag">ISO</span>}
                  <span className="show-phone page-sub">
                    {r.namespace} · {r.size}
                  </span>
                </td>
                <td className="hide-phone">{r.namespace}</td>
                <td>
                  <span className={phaseClass(r)}>{r.phase}</span>
                  {importing(r) && r.progress !== null && (
                    <span
                      className="progress"
                      role="progressbar"
                      aria-label={`${r.name} import progress`}
                      aria-valuenow={Math.round(r.progress)}
                      aria-valuemin={0}
                      aria-valuemax={100}
                      data-testid="dv-progress"
                    >
                      <span style={{ width: `${r.progress}%` }} />
                    </span>
                  )}
                  {importing(r) && r.progress !== null && <span className="page-sub"> {r.progress.toFixed(1)}%</span>}
                  {r.error && (
                    <div className="field-error" data-testid="dv-error">
                      {r.error}
                      {r.restarts > 0 ? ` (attempt ${r.restarts})` : ''}
                    </div>
                  )}
                </td>
                <td className="num hide-phone">{r.size}</td>
                <td className="hide-phone mono wrap-anywhere">{r.source}</td>
                {!readOnly && (
                  <td className="row-actions">
                    <button
                      type="button"
                      className="btn-small"
                      disabled={remove.isPending}
                      onClick={() => remove.mutate({ namespace: r.namespace, name: r.name, ...inContext(context) })}
                      aria-label={`Delete image ${r.name}`}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {list.isSuccess && rows.length === 0 && (
              <tr>
                <td colSpan={6} className="page-sub">
                  Nothing imported yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {!readOnly && (
        <form
          className="panel-body"
          aria-label="Import an image"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setErrors({ byField: {}, general: [] });
            create.mutate({
              name: form.name,
              url: form.url.trim(),
              size: form.size.trim(),
              ...(form.namespace.trim() ? { namespace: form.namespace.trim() } : {}),
              ...inContext(context),
            });
          }}
        >
          <div className="form-grid">
            {field(
              'name',
              'Name',
              <input
                id="dv-name"
                value={form.name}
                spellCheck={false}
                autoComplete="off"
                onChange={(e) => setForm((f) => ({ ...f, name: e.target.value }))}
              />,
              errors.byField.name ?? localName,
            )}
            {field(
              'url',
              'URL (qcow2, raw or ISO)',
              <input
                id="dv-url"
                value={form.url}
                placeholder="https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img"
                spellCheck={false}
                autoComplete="off"
                onChange={(e) => setForm((f) => ({ ...f, url: e.target.value }))}
              />,
              errors.byField.url,
            )}
            {field(
              'size',
              'Size',
              <input
                id="dv-size"
                value={form.size}
                onChange={(e) => setForm((f) => ({ ...f, size: e.target.value }))}
              />,
              errors.byField.size,
            )}
            {field(
              'namespace',
              'Namespace',
              <input
                id="dv-namespace"
                value={form.namespace}
                placeholder={defaultNamespace}
                spellCheck={false}
                onChange={(e) => setForm((f) => ({ ...f, namespace: e.target.value }))}
              />,
              errors.byField.namespace,
            )}
          </div>
          {errors.general.length > 0 && <div className="inline-error">{errors.general.join('; ')}</div>}
          <div className="wizard-foot">
            <button type="submit" className="btn-primary" disabled={create.isPending || !!localName || !form.name}>
              Import
            </button>
          </div>
        </form>
      )}
      {!readOnly && (
        <UploadImageForm defaultNamespace={defaultNamespace} context={context} onChange={() => void refresh()} />
      )}
    </section>
  );
}
