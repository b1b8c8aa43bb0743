'use client';
// Custom image sources: list, add or replace (by name), remove. The server validates (DNS-1123 name, http(s) URL or
// image reference); its 400 names the field, shown next to it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SourceKind } from '@/server/schemas/images';
import { useTRPC } from '../../lib/trpc';
import { fieldErrors, nameProblem } from '../../lib/validation';
import { inContext } from '../../lib/cluster-links';

const KIND_LABEL: Record<SourceKind, string> = {
  containerDisk: 'Containerdisk',
  url: 'Disk image URL',
  iso: 'ISO URL',
};
const URI_PLACEHOLDER: Record<SourceKind, string> = {
  containerDisk: 'ghcr.io/me/image:tag',
  url: 'https://example.org/disk.qcow2',
  iso: 'https://example.org/installer.iso',
};
const FIELDS = ['name', 'kind', 'uri', 'description'] as const;
type Field = (typeof FIELDS)[number];

/** `context`: the cluster whose sources are shown and changed (absent: the default one). */
export function SourcesPanel({ readOnly, context }: { readOnly: boolean; context?: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.sources.list.queryOptions(context ? { context } : undefined));
  const [form, setForm] = useState({ name: '', kind: 'containerDisk' as SourceKind, uri: '', description: '' });
  const [errors, setErrors] = useState<{ byField: Partial<Record<Field, string>>; general: string[] }>({
    byField: {},
    general: [],
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.sources.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.images.list.queryKey() }),
    ]);
  const save = useMutation(
    trpc.sources.save.mutationOptions({
      onSuccess: () => {
        setForm((f) => ({ ...f, name: '', uri: '', description: '' }));
        setErrors({ byField: {}, general: [] });
        void refresh();
      },
      onError: (err) => setErrors(fieldErrors(err.message, FIELDS)),
    }),
  );
  const remove = useMutation(trpc.sources.remove.mutationOptions({ onSettled: () => void refresh() }));
  const localName = form.name ? nameProblem(form.name) : null;
  const submit = () => {
    setErrors({ byField: {}, general: [] });
    save.mutate({
      name: form.name,
      kind: form.kind,
      uri: form.uri.trim(),
      ...(form.description.trim() ? { description: form.description.trim() } : {}),
      ...inContext(context),
    });
  };
  const rows = list.data ?? [];
  return (
    <section className="panel" aria-label="Custom sources">
      <div className="panel-head">
        <h2>Custom sources</h2>
        <span className="page-sub">shared by everyone, kept in ConfigMap corral-sources</span>
      </div>
      {list.isError && (
        <div className="panel-body">
          <div className="inline-error">Could not load the sources: {list.error.message}</div>
        </div>
      )}
      <div className="table-scroll">
        <table className="data-table" data-testid="sources-table">
          <thead>
            <tr>
              <th>Name</th>
              <th className="hide-phone">Kind</th>
              <th className="hide-phone">Source</th>
              <th className="hide-phone">Description</th>
              {!readOnly && (
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.name} data-source={s.name}>
                <td>
                  <span className="mono">{s.name}</span>
                  <span className="show-phone page-sub wrap-anywhere">
                    {s.kind ? KIND_LABEL[s.kind] : ''} · <span className="mono">{s.uri}</span>
                  </span>
                </td>
                <td className="hide-phone">{s.kind ? KIND_LABEL[s.kind] : ''}</td>
                <td className="hide-phone mono wrap-anywhere">{s.uri}</td>
                <td className="hide-phone">{s.description}</td>
                {!readOnly && (
                  <td className="row-actions">
                    <button
                      type="button"
                      className="btn-small"
                      disabled={remove.isPending}
                      onClick={() => remove.mutate({ name: s.name, ...inContext(context) })}
                      aria-label={`Remove source ${s.name}`}
                    >
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {list.isSuccess && rows.length === 0 && (
              <tr>
                <td colSpan={5} className="page-sub">
                  No custom sources yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {!readOnly && (
        <form
          className="panel-body"
          aria-label="Add a custom source"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <div className="form-grid">
            <div className="field">
              <label htmlFor="source-name">Name</label>
              <input
                id="source-name"
                value={form.name}
                spellCheck={false}
                autoComplete="off"
                aria-invalid={errors.byField.name || localName ? true : undefined}
                onChange={(e) => setForm((f) => ({ ...f, name: e.target.value }))}
              />
              {(errors.byField.name ?? localName) && (
                <span className="field-error" role="alert" data-testid="error-source-name">
                  {errors.byField.name ?? localName}
                </span>
              )}
            </div>
            <div className="field">
              <label htmlFor="source-kind">Kind</label>
              <select
                id="source-kind"
                value={form.kind}
                onChange={(e) => setForm((f) => ({ ...f, kind: e.target.value as SourceKind }))}
              >
                {(Object.keys(KIND_LABEL) as SourceKind[]).map((k) => (
                  <option key={k} value={k}>
                    {KIND_LABEL[k]}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="source-uri">{form.kind === 'containerDisk' ? 'Image reference' : 'URL'}</label>
              <input
                id="source-uri"
                value={form.uri}
                placeholder={URI_PLACEHOLDER[form.kind]}
                spellCheck={false}
                autoComplete="off"
                aria-invalid={errors.byField.uri ? true : undefined}
                onChange={(e) => setForm((f) => ({ ...f, uri: e.target.value }))}
              />
              {errors.byField.uri && (
                <span className="field-error" role="alert" data-testid="error-source-uri">
                  {errors.byField.uri}
                </span>
              )}
            </div>
            <div className="field">
              <label htmlFor="source-description">Description</label>
              <input
                id="source-description"
                value={form.description}
                onChange={(e) => setForm((f) => ({ ...f, description: e.target.value }))}
              />
            </div>
          </div>
          {errors.general.length > 0 && <div className="inline-error">{errors.general.join('; ')}</div>}
          <div className="wizard-foot">
            <button type="submit" className="btn-primary" disabled={save.isPending || !!localName || !form.name}>
              Add source
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
