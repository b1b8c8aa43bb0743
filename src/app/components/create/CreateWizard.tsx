'use client';
// The create wizard: step 1 picks the source, step 2 configures the VM. Fields are checked as you type; what the
// server refuses is shown next to the field it names. After creating, the new VM's page opens and follows it live.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import {
  FORM_FIELDS,
  formFieldOf,
  SIZE_PRESETS,
  SOURCE_FIELD_NAMES,
  SOURCE_KINDS,
  sourceHasDisk,
  sourceLabel,
  tabOf,
  suggestName,
  templateRef,
  toCloneInput,
  toCreateInput,
  validateForm,
  type CreateForm,
  type FormField,
  type SourceKind,
  DEFAULT_CREATE_FORM,
} from '../../lib/create-form';
import { useFleet, useTask, useVm } from '../../lib/live';
import type { CatalogImage } from '../../lib/model';
import type { DataVolumeRow } from '@/server/schemas/images';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { fieldErrors } from '../../lib/validation';
import { BlockedBy, useBlocker } from '../health/BlockedBy';
import { StatusDot } from '../StatusDot';
import { TaskLogDialog } from '../TasksPanel';
import { TaskProgress } from '../vm/SnapshotsTab';
import { LibraryPicker } from './LibraryPicker';
import { Logo } from './Logo';
import { inContext, vmPageHref } from '../../lib/cluster-links';

type Category = 'all' | CatalogImage['category'];
const CATEGORIES: { id: Category; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'server', label: 'Servers' },
  { id: 'desktop', label: 'Desktops' },
  { id: 'appliance', label: 'Appliances' },
];

const SOURCE_PLACEHOLDER: Record<SourceKind, string> = {
  image: '',
  dataVolume: '',
  isoDataVolume: '',
  containerDisk: 'quay.io/containerdisks/fedora:42',
  import: 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img',
  iso: 'https://example.org/installer.iso',
  pvc: 'golden-disk',
  bootc: 'quay.io/fedora/fedora-bootc:42',
  template: '',
};

const CLOUD_INIT_EXAMPLE = `#cloud-config
packages:
  - qemu-guest-agent
runcmd:
  - systemctl enable --now qemu-guest-agent`;

function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  hint?: string;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {error ? (
        <span className="field-error" id={`${id}-error`} role="alert" data-testid={`error-${id}`}>
          {error}
        </span>
      ) : hint ? (
        <span className="field-hint">{hint}</span>
      ) : null}
    </div>
  );
}

export function CreateWizard() {
  const trpc = useTRPC();
  const router = useRouter();
  const session = useSession();
  // A failing doctor check that turns VM creation or disk imports off (KubeVirt/CDI missing, no namespace): the
  // wizard says so and links to the row that fixes it.
  const createBlocker = useBlocker('create');
  const importBlocker = useBlocker('imports');
  const { state, version } = useFleet();
  // With several clusters the VM is created in the one picked here (the default first): its images, library,
  // instance types, templates and nodes are that cluster's.
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const context = picked ?? state.clusters[0]?.context;
  const inCluster = <T extends { context?: string }>(rows: T[]) =>
    context ? rows.filter((r) => !r.context || r.context === context) : rows;
  const images = useQuery(trpc.images.list.queryOptions(context ? { context } : undefined));
  const types = useQuery(trpc.instancetypes.list.queryOptions(context ? { context } : undefined));
  const [step, setStep] = useState<'source' | 'config'>('source');
  const [category, setCategory] = useState<Category>('all');
  const [touched, setTouched] = useState<Partial<Record<FormField, boolean>>>({});
  const [serverErrors, setServerErrors] = useState<{ byField: Partial<Record<FormField, string>>; general: string[] }>({
    byField: {},
    general: [],
  });
  const [bootcTask, setBootcTask] = useState<string | null>(null);
  const [preset, setPreset] = useState('medium');
  const [form, setForm] = useState<CreateForm>(DEFAULT_CREATE_FORM);
  const errors = validateForm(form);
  const namespaces = useMemo(() => {
    void version;
    return [...new Set(state.vms.list().map((v) => v.namespace))].sort();
  }, [state, version]);
  const templates = useMemo(() => {
    void version;
    return inCluster(state.vms.list()).filter((v) => v.template);
  }, [state, version, context]);
  const nodes = inCluster(state.nodes.list());
  const defaultNamespace = session.capabilities?.defaultNamespace ?? 'tailvm';

  const set = <K extends keyof CreateForm>(key: K, value: CreateForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setTouched((t) => ({ ...t, [key === 'sourceValue' ? 'source' : key]: true }));
    if (key in serverErrors.byField || (key === 'sourceValue' && serverErrors.byField.source))
      setServerErrors((s) => ({
        ...s,
        byField: { ...s.byField, [key === 'sourceValue' ? 'source' : key]: undefined },
      }));
  };
  /** A field's message: the server's (it has the last word) or, once touched, the local check's. */
  const errorOf = (field: FormField) => serverErrors.byField[field] ?? (touched[field] ? errors[field] : undefined);

  const create = useMutation(
    trpc.vms.create.mutationOptions({
      onSuccess: (data) => {
        if ('name' in data)
          router.push(
            vmPageHref({ namespace: data.namespace, name: data.name, context }, state.defaultContext, 'summary'),
          );
        else setBootcTask(data.task);
      },
      onError: (err) => {
        const parsed = fieldErrors(err.message, [...FORM_FIELDS, ...SOURCE_FIELD_NAMES]);
        const byField: Partial<Record<FormField, string>> = {};
        for (const [f, m] of Object.entries(parsed.byField)) {
          const field = formFieldOf(f);
          if (field) byField[field] = m;
        }
        setServerErrors({ byField, general: parsed.general });
        if (byField.source) setStep('source');
      },
    }),
  );

  // `?template=<ns>/<name>` (the Datacenter's "Create VM from template"): that template, straight to step 2; with
  // `&context=lab`, lab's template, cloned in lab (never the default cluster's namesake).
  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    const ref = templateRef(params.get('template') ?? '');
    if (!ref) return;
    const fromCluster = params.get('context');
    if (fromCluster) setPicked(fromCluster);
    setForm((f) => ({
      ...f,
      source: 'template',
      sourceValue: `${ref.namespace}/${ref.name}`,
      name: suggestName(ref.name.replace(/-?template$/, '') || ref.name),
    }));
    setStep('config');
  }, []);

  // A template is cloned under the new name: a task, after which the new VM's page opens.
  const clone = useMutation(
    trpc.clones.create.mutationOptions({
      onError: (err) => {
        const parsed = fieldErrors(err.message, [...FORM_FIELDS, 'target']);
        const byField: Partial<Record<FormField, string>> = {};
        for (const [f, m] of Object.entries(parsed.byField)) {
          const field = f === 'target' ? 'name' : formFieldOf(f);
          if (field) byField[field] = m;
        }
        setServerErrors({ byField, general: parsed.general });
      },
    }),
  );
  const cloneTask = useTask(clone.data?.task ?? null);
  const cloned = useVm(clone.data?.namespace ?? '', clone.data?.target ?? '', context);
  useEffect(() => {
    if (cloneTask?.status === 'done' && cloned) router.push(vmPageHref(cloned, state.defaultContext, 'summary'));
  }, [cloneTask?.status, cloned]);

  const sourceOk = !errors.source;
  const chooseSource = (kind: SourceKind) => {
    setForm((f) => ({ ...f, source: kind, sourceValue: '' }));
    setTouched((t) => ({ ...t, source: false }));
  };
  const toConfig = () => {
    setTouched((t) => ({ ...t, source: true }));
    if (!sourceOk) return;
    if (!form.name) setForm((f) => ({ ...f, name: suggestName(f.sourceValue) }));
    setStep('config');
  };
  const submit = () => {
    setTouched(Object.fromEntries(FORM_FIELDS.map((f) => [f, true])));
    if (Object.keys(errors).length > 0) {
      if (errors.source) setStep('source');
      return;
    }
    setServerErrors({ byField: {}, general: [] });
    const cloneInput = toCloneInput(form);
    if (cloneInput) clone.mutate({ ...cloneInput, ...inContext(context) });
    else create.mutate({ ...toCreateInput(form), ...inContext(context) });
  };

  if (session.loaded && session.readOnly) {
    return (
      <div className="workbench">
        <div className="panel empty">
          <h2>Read-only</h2>
          <p>Your login is not in CORRAL_ADMINS, so you cannot create VMs.</p>
        </div>
      </div>
    );
  }

  const templateSource = form.source === 'template' ? templateRef(form.sourceValue) : null;
  const catalog = (images.data ?? []).filter((i) => category === 'all' || i.category === category);
  const sourceMeta = SOURCE_KINDS.find((s) => s.kind === tabOf(form.source));
  const fromLibrary = form.source === 'dataVolume' || form.source === 'isoDataVolume';
  const pickLibrary = (dv: DataVolumeRow) => {
    setForm((f) => ({
      ...f,
      source: dv.contentType === 'iso' ? 'isoDataVolume' : 'dataVolume',
      sourceValue: dv.name,
      namespace: dv.namespace,
    }));
    setTouched((t) => ({ ...t, source: true, namespace: true }));
    setServerErrors((e) => ({ ...e, byField: { ...e.byField, source: undefined, namespace: undefined } }));
  };

  return (
    <div className="workbench">
      <div className="page-head">
        <h1>Create VM</h1>
        {state.clusters.length > 1 && (
          <label className="create-cluster">
            Cluster{' '}
            <select
              data-testid="create-cluster"
              value={context}
              onChange={(e) => {
                setPicked(e.target.value);
                setForm((f) => ({ ...f, sourceValue: f.source === 'image' ? f.sourceValue : '' }));
              }}
            >
              {state.clusters.map((c) => (
                <option key={c.context} value={c.context}>
                  {c.context}
                  {c.default ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <ol
          className="steps"
          aria-label="Steps"
          style={{ listStyle: 'none', margin: 0, padding: 0, display: 'flex', gap: 8 }}
        >
          <li
            className={step === 'source' ? 'active' : undefined}
            aria-current={step === 'source' ? 'step' : undefined}
          >
            1 · Source
          </li>
          <li aria-hidden>›</li>
          <li
            className={step === 'config' ? 'active' : undefined}
            aria-current={step === 'config' ? 'step' : undefined}
          >
            2 · Configuration
          </li>
        </ol>
      </div>

      {step === 'source' ? (
        <section className="panel" aria-label="Source">
          <div className="panel-head">
            <div className="source-tabs" role="radiogroup" aria-label="Source kind">
              {SOURCE_KINDS.map((s) => {
                const unavailable = s.kind === 'bootc' && session.capabilities && !session.capabilities.bootc;
                return (
                  <button
                    key={s.kind}
                    type="button"
                    role="radio"
                    className="chip"
                    aria-checked={tabOf(form.source) === s.kind}
                    aria-pressed={tabOf(form.source) === s.kind}
                    disabled={unavailable === true}
                    title={
                      unavailable
                        ? `bootc builds are not available on this cluster: ${session.capabilities?.bootcWhyNot.join('; ')}`
                        : s.hint
                    }
                    onClick={() => chooseSource(s.kind)}
                  >
                    {s.label}
                  </button>
                );
              })}
            </div>
          </div>
          <div className="panel-body" style={{ display: 'flex', flexDirection: 'column', gap: 12 }}>
            {createBlocker && <BlockedBy blocker={createBlocker} what="New VMs" />}
            {importBlocker && <BlockedBy blocker={importBlocker} what="Disk imports and uploads" />}
            <span className="page-sub">{sourceMeta?.hint}</span>
            {form.source === 'template' ? (
              <div className="catalog" data-testid="templates">
                {templates.map((t) => {
                  const value = `${t.namespace}/${t.name}`;
                  return (
                    <button
                      key={value}
                      type="button"
                      className="catalog-card"
                      aria-pressed={form.sourceValue === value}
                      data-template={value}
                      onClick={() => set('sourceValue', value)}
                      onDoubleClick={() => {
                        setForm((f) => ({ ...f, sourceValue: value, name: f.name || suggestName(t.name) }));
                        setStep('config');
                      }}
                    >
                      <StatusDot status={t.status} />
                      <span>
                        <strong>{t.name}</strong>
                        <span className="desc">
                          {t.namespace} · {t.cpu ? `${t.cpu} vCPU` : 'instancetype'}
                          {t.mem ? ` · ${t.mem}` : ''}
                          {t.disk ? ` · ${t.disk} disk` : ''}
                        </span>
                      </span>
                    </button>
                  );
                })}
                {templates.length === 0 && (
                  <span className="page-sub">
                    No templates yet: convert a stopped VM with More ▾ → Convert to template on its page.
                  </span>
                )}
              </div>
            ) : fromLibrary ? (
              <LibraryPicker
                context={context}
                selected={form.sourceValue ? `${form.namespace || defaultNamespace}/${form.sourceValue}` : ''}
                onPick={pickLibrary}
                onChoose={(dv) => {
                  pickLibrary(dv);
                  setForm((f) => ({ ...f, name: f.name || suggestName(dv.name) }));
                  setStep('config');
                }}
              />
            ) : form.source === 'image' ? (
              <>
                <div className="chips" role="group" aria-label="Catalog category">
                  {CATEGORIES.map((c) => (
                    <button
                      key={c.id}
                      type="button"
                      className="chip"
                      aria-pressed={category === c.id}
                      onClick={() => setCategory(c.id)}
                    >
                      {c.label}
                    </button>
                  ))}
                </div>
                {images.isError && (
                  <div className="inline-error">Could not load the catalog: {images.error.message}</div>
                )}
                {images.isPending && <span className="page-sub">Loading the catalog…</span>}
                <div className="catalog" data-testid="catalog">
                  {catalog.map((img) => (
                    <button
                      key={img.name}
                      type="button"
                      className="catalog-card"
                      aria-pressed={form.sourceValue === img.name}
                      data-image={img.name}
                      onClick={() => set('sourceValue', img.name)}
                      onDoubleClick={() => {
                        setForm((f) => ({ ...f, sourceValue: img.name, name: f.name || suggestName(img.name) }));
                        setStep('config');
                      }}
                    >
                      <Logo name={img.name} logo={img.logo} />
                      <span>
                        <strong>{img.name}</strong>
                        <span className="desc">{img.description}</span>
                        {img.custom && <span className="tag">custom</span>}
                      </span>
                    </button>
                  ))}
                  {images.isSuccess && catalog.length === 0 && (
                    <span className="page-sub">No images in this category.</span>
                  )}
                </div>
              </>
            ) : (
              <Field id="source" label={sourceMeta?.label ?? 'Source'} error={errorOf('source')}>
                <input
                  id="source"
                  value={form.sourceValue}
                  placeholder={SOURCE_PLACEHOLDER[form.source]}
                  onChange={(e) => set('sourceValue', e.target.value)}
                  aria-invalid={errorOf('source') ? true : undefined}
                  aria-describedby="source-error"
                  spellCheck={false}
                />
              </Field>
            )}
            {(form.source === 'pvc' || form.source === 'iso') && (
              <span className="page-sub">
                {form.source === 'iso' ? 'An ISO already imported or uploaded?' : 'An image from the Images page?'}{' '}
                <button type="button" className="btn-small btn-ghost" onClick={() => chooseSource('dataVolume')}>
                  Pick it from the image library
                </button>
              </span>
            )}
            {(form.source === 'image' || form.source === 'template' || fromLibrary) && errorOf('source') && (
              <span className="field-error" role="alert" data-testid="error-source">
                {errorOf('source')}
              </span>
            )}
            <div className="wizard-foot">
              <button type="button" className="btn-primary" onClick={toConfig} data-testid="wizard-next">
                Next: configuration →
              </button>
            </div>
          </div>
        </section>
      ) : (
        <form
          className="panel"
          aria-label="Configuration"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <div className="panel-head">
            <h2>
              {sourceLabel(form.source)}:{' '}
              <span className="mono">
                {fromLibrary ? `${form.namespace || defaultNamespace}/${form.sourceValue}` : form.sourceValue}
              </span>
            </h2>
            <button type="button" className="btn-small btn-ghost" onClick={() => setStep('source')}>
              Change source
            </button>
          </div>
          <div className="panel-body" style={{ display: 'flex', flexDirection: 'column', gap: 16 }}>
            <div className="form-grid">
              <Field id="name" label="Name" error={errorOf('name')} hint="a-z, 0-9 and -, up to 63 characters">
                <input
                  id="name"
                  value={form.name}
                  autoFocus
                  onChange={(e) => set('name', e.target.value)}
                  aria-invalid={errorOf('name') ? true : undefined}
                  aria-describedby="name-error"
                  spellCheck={false}
                  autoComplete="off"
                />
              </Field>
              <Field
                id="namespace"
                label="Namespace"
                error={errorOf('namespace')}
                hint={
                  templateSource
                    ? `KubeVirt clones within the template's namespace (${templateSource.namespace})`
                    : fromLibrary
                      ? "The image's namespace: a VM uses library images of its own namespace"
                      : `Created if missing; default ${defaultNamespace}`
                }
              >
                <input
                  id="namespace"
                  list="namespaces"
                  placeholder={templateSource?.namespace ?? defaultNamespace}
                  value={form.namespace}
                  onChange={(e) => set('namespace', e.target.value)}
                  aria-invalid={errorOf('namespace') ? true : undefined}
                />
                <datalist id="namespaces">
                  {namespaces.map((ns) => (
                    <option key={ns} value={ns} />
                  ))}
                </datalist>
              </Field>
              {!templateSource && (
                <Field id="node" label="Node" error={errorOf('node')}>
                  <select id="node" value={form.node} onChange={(e) => set('node', e.target.value)}>
                    <option value="">Any (scheduler decides)</option>
                    {nodes.map((n) => (
                      <option key={n.name} value={n.name} disabled={!n.ready}>
                        {n.name}
                        {n.ready ? '' : ' (not ready)'}
                      </option>
                    ))}
                  </select>
                </Field>
              )}
            </div>

            {form.source === 'template' ? (
              <p className="page-sub" style={{ margin: 0 }} data-testid="template-note">
                A full clone of the template: its vCPUs, memory, disks and cloud-init are copied. Change them on the new
                VM afterwards.
              </p>
            ) : (
              <>
                <div className="field">
                  <span className="field-label">Size</span>
                  <div className="presets" role="group" aria-label="Size presets">
                    {SIZE_PRESETS.map((p) => (
                      <button
                        key={p.id}
                        type="button"
                        aria-pressed={preset === p.id && !form.instancetype}
                        disabled={!!form.instancetype}
                        title={form.instancetype ? 'The instancetype sizes this VM' : undefined}
                        onClick={() => {
                          setPreset(p.id);
                          setForm((f) => ({ ...f, cpu: p.cpu, mem: p.mem, disk: p.disk }));
                        }}
                      >
                        {p.label}{' '}
                        <span className="page-sub">
                          {p.cpu} vCPU · {p.mem}
                        </span>
                      </button>
                    ))}
                    <button
                      type="button"
                      aria-pressed={preset === 'custom' && !form.instancetype}
                      disabled={!!form.instancetype}
                      onClick={() => setPreset('custom')}
                    >
                      Custom
                    </button>
                  </div>
                </div>
                <div className="form-grid">
                  <Field id="cpu" label="vCPUs" error={errorOf('cpu')}>
                    <input
                      id="cpu"
                      type="number"
                      min={1}
                      max={128}
                      value={form.instancetype ? '' : form.cpu}
                      disabled={!!form.instancetype}
                      placeholder={form.instancetype ? 'from instancetype' : undefined}
                      onChange={(e) => {
                        setPreset('custom');
                        set('cpu', e.target.value === '' ? 0 : Number(e.target.value));
                      }}
                      aria-invalid={errorOf('cpu') ? true : undefined}
                    />
                  </Field>
                  <Field id="mem" label="Memory" error={errorOf('mem')} hint="e.g. 4Gi or 4G">
                    <input
                      id="mem"
                      value={form.instancetype ? '' : form.mem}
                      disabled={!!form.instancetype}
                      placeholder={form.instancetype ? 'from instancetype' : undefined}
                      onChange={(e) => {
                        setPreset('custom');
                        set('mem', e.target.value);
                      }}
                      aria-invalid={errorOf('mem') ? true : undefined}
                    />
                  </Field>
                  <Field
                    id="disk"
                    label="Disk"
                    error={errorOf('disk')}
                    hint={
                      form.source === 'dataVolume'
                        ? "Root disk size; never less than the image's"
                        : form.source === 'isoDataVolume'
                          ? 'The blank disk the installer writes to, e.g. 20Gi'
                          : sourceHasDisk(form.source)
                            ? 'Root disk size, e.g. 20Gi'
                            : 'Not used: this source boots an ephemeral container disk'
                    }
                  >
                    <input
                      id="disk"
                      value={form.disk}
                      disabled={!sourceHasDisk(form.source)}
                      onChange={(e) => {
                        setPreset('custom');
                        set('disk', e.target.value);
                      }}
                      aria-invalid={errorOf('disk') ? true : undefined}
                    />
                  </Field>
                  <Field
                    id="instancetype"
                    label="Instancetype"
                    error={errorOf('instancetype')}
                    hint="Replaces vCPU and memory"
                  >
                    <select
                      id="instancetype"
                      value={form.instancetype}
                      onChange={(e) => set('instancetype', e.target.value)}
                    >
                      <option value="">None</option>
                      {types.data?.instancetypes.map((t) => (
                        <option key={t} value={t}>
                          {t}
                        </option>
                      ))}
                    </select>
                  </Field>
                  <Field id="preference" label="Preference" error={errorOf('preference')}>
                    <select id="preference" value={form.preference} onChange={(e) => set('preference', e.target.value)}>
                      <option value="">None</option>
                      {types.data?.preferences.map((t) => (
                        <option key={t} value={t}>
                          {t}
                        </option>
                      ))}
                    </select>
                  </Field>
                </div>
                <div className="form-grid">
                  <Field
                    id="sshKey"
                    label="SSH public key"
                    error={errorOf('sshKey')}
                    hint="Optional; added for the image's default user"
                  >
                    <textarea
                      id="sshKey"
                      rows={3}
                      className="mono"
                      placeholder="ssh-ed25519 AAAA… you@host"
                      value={form.sshKey}
                      onChange={(e) => set('sshKey', e.target.value)}
                      aria-invalid={errorOf('sshKey') ? true : undefined}
                      spellCheck={false}
                    />
                  </Field>
                  <Field
                    id="cloudInit"
                    label="cloud-init user data"
                    error={errorOf('cloudInit')}
                    hint="Optional; stored in a Secret, never in the VM spec"
                  >
                    <textarea
                      id="cloudInit"
                      rows={6}
                      className="mono"
                      placeholder={CLOUD_INIT_EXAMPLE}
                      value={form.cloudInit}
                      onChange={(e) => set('cloudInit', e.target.value)}
                      spellCheck={false}
                    />
                  </Field>
                </div>
              </>
            )}
            {(serverErrors.general.length > 0 ||
              ((create.error ?? clone.error) &&
                Object.keys(serverErrors.byField).length === 0 &&
                serverErrors.general.length === 0)) && (
              <div className="inline-error" role="alert" data-testid="create-error">
                {serverErrors.general.join('; ') || (create.error ?? clone.error)?.message}
              </div>
            )}
            {clone.isSuccess && (
              <div data-testid="clone-progress">
                {cloneTask ? (
                  <TaskProgress task={cloneTask} />
                ) : (
                  <span className="page-sub">Task {clone.data.task} started…</span>
                )}
              </div>
            )}
            <div className="wizard-foot">
              <label style={{ marginRight: 'auto', display: 'flex', gap: 6, alignItems: 'center' }}>
                <input
                  type="checkbox"
                  checked={form.start}
                  onChange={(e) => set('start', e.target.checked)}
                  style={{ minHeight: 0 }}
                />
                Start after creation
              </label>
              <button type="button" onClick={() => setStep('source')}>
                ← Back
              </button>
              {createBlocker && <BlockedBy blocker={createBlocker} what="New VMs" />}
              <button
                type="submit"
                className="btn-primary"
                disabled={
                  !!createBlocker ||
                  create.isPending ||
                  clone.isPending ||
                  (clone.isSuccess && cloneTask?.status !== 'error')
                }
                title={createBlocker ? `Create VM: ${createBlocker.reason}` : undefined}
                data-testid="create-submit"
              >
                {create.isPending || clone.isPending || (clone.isSuccess && cloneTask?.status === 'running')
                  ? 'Creating…'
                  : 'Create VM'}
              </button>
            </div>
          </div>
        </form>
      )}
      <TaskLogDialog id={bootcTask} onClose={() => router.push('/')} />
    </div>
  );
}
