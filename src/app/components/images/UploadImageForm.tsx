'use client';
// Upload an ISO or disk image from this computer: the file is sent as the raw body of
// POST /api/datavolumes/{ns}/{name}/upload (streamed by Corral to CDI's upload proxy). XMLHttpRequest, not fetch,
// because only it reports upload progress; Cancel aborts it, and the DataVolume's row then says it was cut off. A
// second Upload under the same name sends the file into that DataVolume again (the server allows it while it waits).
import { useRef, useState, type ReactNode } from 'react';
import { nameProblem } from '../../lib/validation';

const GiB = 1024 ** 3;

/** The smallest whole Gi (at least 1Gi) that holds the file. */
export function sizeFor(bytes: number): string {
  return `${Math.max(1, Math.ceil(bytes / GiB))}Gi`;
}

type State =
  | { kind: 'idle' }
  | { kind: 'sending'; percent: number }
  | { kind: 'done'; name: string }
  | { kind: 'error'; message: string };

export function UploadImageForm({
  defaultNamespace,
  context,
  onChange,
}: {
  defaultNamespace: string;
  /** The cluster the DataVolume is created in (absent: the default one). */
  context?: string;
  onChange: () => void;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [form, setForm] = useState({ name: '', namespace: '', size: '', contentType: 'iso' as 'iso' | 'disk' });
  const [state, setState] = useState<State>({ kind: 'idle' });
  const xhr = useRef<XMLHttpRequest | null>(null);
  const localName = form.name ? nameProblem(form.name) : null;
  const sending = state.kind === 'sending';

  const pick = (f: File | null) => {
    setFile(f);
    setState({ kind: 'idle' });
    if (!f) return;
    const base = f.name
      .replace(/\.[^.]+$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63);
    setForm((prev) => ({
      ...prev,
      name: prev.name || base,
      size: sizeFor(f.size),
      contentType: /\.iso$/i.test(f.name) ? 'iso' : 'disk',
    }));
  };

  const start = () => {
    if (!file) return;
    const ns = form.namespace.trim() || defaultNamespace;
    const query = new URLSearchParams({ size: form.size.trim(), contentType: form.contentType });
    if (context) query.set('context', context);
    const req = new XMLHttpRequest();
    xhr.current = req;
    req.open('POST', `/api/datavolumes/${encodeURIComponent(ns)}/${encodeURIComponent(form.name)}/upload?${query}`);
    req.setRequestHeader('Content-Type', 'application/octet-stream');
    req.upload.onprogress = (e) => {
      if (e.lengthComputable) setState({ kind: 'sending', percent: (e.loaded / e.total) * 100 });
    };
    req.onload = () => {
      xhr.current = null;
      if (req.status === 200) {
        setState({ kind: 'done', name: form.name });
        setFile(null);
        setForm((f) => ({ ...f, name: '', size: '' }));
      } else {
        let message = `HTTP ${req.status}`;
        try {
          message = (JSON.parse(req.responseText) as { error?: string }).error ?? message;
        } catch {
          // not JSON: keep the status
        }
        setState({ kind: 'error', message });
      }
      onChange();
    };
    req.onerror = () => {
      xhr.current = null;
      setState({ kind: 'error', message: 'the connection to Corral failed during the upload' });
      onChange();
    };
    req.onabort = () => {
      xhr.current = null;
      setState({
        kind: 'error',
        message: `upload cancelled: ${form.name} is not Succeeded; Upload again to send the file into it once more, or delete it`,
      });
      onChange();
    };
    setState({ kind: 'sending', percent: 0 });
    req.send(file);
    // The DataVolume appears as soon as Corral creates it: show its row.
    setTimeout(onChange, 500);
  };

  const field = (id: string, label: string, input: ReactNode) => (
    <div className="field">
      <label htmlFor={`up-${id}`}>{label}</label>
      {input}
    </div>
  );
  return (
    <form
      className="panel-body"
      aria-label="Upload an image"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        start();
      }}
    >
      <h3>Upload from this computer</h3>
      <div className="form-grid">
        {field(
          'file',
          'File (ISO, qcow2 or raw)',
          <input
            id="up-file"
            type="file"
            accept=".iso,.img,.qcow2,.raw"
            disabled={sending}
            onChange={(e) => pick(e.target.files?.[0] ?? null)}
          />,
        )}
        {field(
          'name',
          'Name',
          <>
            <input
              id="up-name"
              value={form.name}
              spellCheck={false}
              autoComplete="off"
              disabled={sending}
              onChange={(e) => setForm((f) => ({ ...f, name: e.target.value }))}
            />
            {localName && (
              <span className="field-error" role="alert">
                {localName}
              </span>
            )}
          </>,
        )}
        {field(
          'size',
          'Size',
          <input
            id="up-size"
            value={form.size}
            placeholder="from the file"
            disabled={sending}
            onChange={(e) => setForm((f) => ({ ...f, size: e.target.value }))}
          />,
        )}
        {field(
          'namespace',
          'Namespace',
          <input
            id="up-namespace"
            value={form.namespace}
            placeholder={defaultNamespace}
            spellCheck={false}
            disabled={sending}
            onChange={(e) => setForm((f) => ({ ...f, namespace: e.target.value }))}
          />,
        )}
        {field(
          'type',
          'Content type',
          <select
            id="up-type"
            value={form.contentType}
            disabled={sending}
            onChange={(e) => setForm((f) => ({ ...f, contentType: e.target.value === 'disk' ? 'disk' : 'iso' }))}
          >
            <option value="iso">ISO (install media)</option>
            <option value="disk">Disk image</option>
          </select>,
        )}
      </div>
      {state.kind === 'sending' && (
        <div className="upload-progress">
          <span
            className="progress"
            role="progressbar"
            aria-label="Upload progress"
            aria-valuenow={Math.round(state.percent)}
            aria-valuemin={0}
            aria-valuemax={100}
            data-testid="upload-progress"
          >
            <span style={{ width: `${state.percent}%` }} />
          </span>
          <span className="page-sub"> {state.percent.toFixed(1)}% sent</span>
        </div>
      )}
      {state.kind === 'error' && (
        <div className="inline-error" role="alert" data-testid="upload-error">
          {state.message}
        </div>
      )}
      {state.kind === 'done' && (
        <div className="page-sub" data-testid="upload-done">
          Uploaded {state.name}.
        </div>
      )}
      <div className="wizard-foot">
        {/* Distinct keys: were React to reuse one <button> for both, Cancel's click would flip it back to
            type=submit before the click's default action runs, and that action would submit the form — a second
            upload POST right after the cancel (it answered 409). */}
        {sending ? (
          <button key="cancel" type="button" className="btn-small" onClick={() => xhr.current?.abort()}>
            Cancel upload
          </button>
        ) : (
          <button
            key="upload"
            type="submit"
            className="btn-primary"
            disabled={!file || !form.name || !!localName || !form.size}
          >
            Upload
          </button>
        )}
      </div>
    </form>
  );
}
