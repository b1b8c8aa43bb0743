'use client';
// Move a VM to another cluster (ADR-0010, docs/move.md): pick a destination (every served cluster, the refused ones
// saying why), a namespace and a name; the preflight runs live on every change and lists its refusals (each with
// its remedy), warnings and what will not carry over, and Move stays disabled while anything is refused. After the
// commit the task's progress shows here, and once it is done a link opens the moved VM. Proxmox VE hosts
// (`--pve`) are listed after the clusters: a VM moved there has no namespace, and no page in Corral.
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import type { MoveInput } from '@/server/schemas/move';
import { ctPageHref, vmPageHref } from '../../lib/cluster-links';
import { useFleet, useTask } from '../../lib/live';
import { useTRPC } from '../../lib/trpc';
import { nameProblem } from '../../lib/validation';
import { ActionDialog } from '../vm/ActionDialog';
import { TaskCancelButton } from '../TaskCancelButton';
import { TextField } from '../TextField';
import { TaskProgress } from '../vm/SnapshotsTab';
import { MovePreflightView } from './MovePreflightView';
import './move.css';

export interface MoveSource {
  /** A VM (the default) or a container. */
  kind?: 'vm' | 'ct';
  context: string;
  namespace: string;
  name: string;
}

export const moveRef = (s: MoveSource) => `kubevirt/${s.context}/${s.namespace}/${s.name}`;

/** `kubevirt/<context>/<namespace>/<name>` → its parts (undefined for anything else). */
export function parseMoveRef(ref: string): MoveSource | undefined {
  const parts = ref.split('/');
  if (parts.length !== 4 || parts[0] !== 'kubevirt') return undefined;
  const [, context = '', namespace = '', name = ''] = parts;
  return context && namespace && name ? { context, namespace, name } : undefined;
}

/** A destination's option value: a cluster's is its context (what a drop names), a PVE host's `pve:<name>`. */
const optionValue = (d: { backend: string; context: string }) => (d.backend === 'pve' ? `pve:${d.context}` : d.context);

/** How long the form waits after a keystroke before asking the preflight again. */
const PREFLIGHT_DEBOUNCE_MS = 250;

export function MoveDialog({
  source,
  toContext: initialContext,
  open,
  onClose,
}: {
  source: MoveSource;
  /** The cluster a drag landed on; without it the first one that can receive. */
  toContext?: string;
  open: boolean;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const { state } = useFleet();
  const ref = moveRef(source);
  const ct = source.kind === 'ct';
  const noun = ct ? 'CT' : 'VM';
  const kind = ct ? ({ kind: 'ct' } as const) : {};
  const destinations = useQuery({ ...trpc.move.destinations.queryOptions({ ref, ...kind }), enabled: open });
  const [toContext, setToContext] = useState('');
  const [namespace, setNamespace] = useState(source.namespace);
  const [name, setName] = useState(source.name);
  const [deleteSource, setDeleteSource] = useState(false);
  const [scratch, setScratch] = useState(false);
  useEffect(() => {
    if (!open) return;
    setNamespace(source.namespace);
    setName(source.name);
    setDeleteSource(false);
    setScratch(false);
    setToContext(initialContext ?? '');
  }, [open, source.namespace, source.name, initialContext]);
  // Without a dropped-on cluster: the first destination that can receive, else the first listed.
  const list = destinations.data?.destinations ?? [];
  const chosen = toContext || optionValue(list.find((d) => d.ok) ?? list[0] ?? { backend: '', context: '' });
  const target = list.find((d) => optionValue(d) === chosen);
  const toPve = target?.backend === 'pve';

  const nsProblem = toPve ? null : namespace === '' ? 'Namespace is required' : nameProblem(namespace);
  const vmNameProblem = nameProblem(name);
  const input: MoveInput | null =
    target && !nsProblem && !vmNameProblem
      ? {
          ref,
          ...kind,
          toBackend: toPve ? 'pve' : 'kubevirt',
          toContext: target.context,
          ...(!toPve && namespace !== source.namespace ? { toNamespace: namespace } : {}),
          ...(name !== source.name ? { name } : {}),
          ...(!toPve && scratch ? { scratch } : {}),
          ...(deleteSource ? { deleteSource } : {}),
        }
      : null;
  const key = input ? JSON.stringify(input) : '';

  const preflight = useMutation(trpc.move.preflight.mutationOptions());
  const commit = useMutation(trpc.move.commit.mutationOptions());
  useEffect(() => {
    if (!open || !input || commit.isSuccess) return;
    const timer = setTimeout(() => preflight.mutate(input), PREFLIGHT_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [open, key, commit.isSuccess]);
  // An answer for an input the form has moved on from is not shown.
  const answer = preflight.data && JSON.stringify(preflight.variables) === key ? preflight.data : undefined;

  const task = useTask(commit.data?.task ?? null);
  const defaultContext = state.clusters[0]?.context ?? chosen;
  const problem =
    nsProblem ??
    vmNameProblem ??
    (!answer ? 'the preflight has not answered yet' : answer.ok ? null : (answer.refusals[0]?.reason ?? 'refused'));
  const close = () => {
    preflight.reset();
    commit.reset();
    onClose();
  };

  return (
    <ActionDialog
      title={`Move ${ct ? 'CT ' : ''}${source.name} to another cluster`}
      open={open}
      onClose={close}
      label="Move"
      busyLabel="Starting…"
      busy={commit.isPending}
      error={commit.error ?? destinations.error ?? preflight.error}
      problem={problem}
      done={commit.isSuccess}
      form={{ id: 'move-form', onSubmit: () => problem === null && input && commit.mutate(input) }}
      after={
        commit.isSuccess && (
          <div data-testid="move-progress">
            {task ? <TaskProgress task={task} /> : <span className="page-sub">Task {commit.data.task} started…</span>}
            {task && <TaskCancelButton task={task} />}
            {task?.status === 'done' && answer && toPve && (
              <span className="page-sub" data-testid="move-pve-done">
                {answer.plan.destination.name} now runs on Proxmox VE host {answer.plan.destination.context}; manage it
                there.
              </span>
            )}
            {task?.status === 'done' && answer && !toPve && (
              <Link
                className="btn btn-primary"
                href={(ct ? ctPageHref : vmPageHref)(
                  {
                    namespace: answer.plan.destination.namespace,
                    name: answer.plan.destination.name,
                    context: answer.plan.destination.context,
                  },
                  defaultContext,
                  'summary',
                )}
                onClick={close}
                data-testid="move-open"
              >
                Open {answer.plan.destination.name} in {answer.plan.destination.context}
              </Link>
            )}
            {task?.status === 'error' && (
              <span className="page-sub">
                Nothing moved: the destination was rolled back and the source left as it was.{' '}
                {task.cancelledBy !== undefined ? `Cancelled by ${task.cancelledBy}.` : 'The task log says why.'}
              </span>
            )}
          </div>
        )
      }
    >
      <p className="page-sub" style={{ margin: 0 }}>
        {ct
          ? `A cold move: CT ${source.name} is stopped, its volume is exported from ${source.context} and uploaded at the destination, and it is started there if it ran.`
          : `A cold move: ${source.name} is stopped, its disks are exported from ${source.context} and uploaded at the destination, and the VM is created there.`}{' '}
        The source is kept (stopped) unless you delete it below.
      </p>
      <div className="field">
        <label htmlFor="move-context">Destination cluster</label>
        <select
          id="move-context"
          value={chosen}
          disabled={commit.isSuccess || list.length === 0}
          onChange={(e) => setToContext(e.target.value)}
        >
          {list
            .filter((d) => d.backend !== 'pve')
            .map((d) => (
              <option key={d.context} value={d.context}>
                {d.context}
                {d.default ? ' (default)' : ''}
                {d.ok ? '' : ' — refused'}
              </option>
            ))}
          {list.some((d) => d.backend === 'pve') && (
            <optgroup label="Proxmox VE hosts">
              {list
                .filter((d) => d.backend === 'pve')
                .map((d) => (
                  <option key={optionValue(d)} value={optionValue(d)}>
                    {d.name}
                    {d.ok ? '' : ' — refused'}
                  </option>
                ))}
            </optgroup>
          )}
        </select>
        {target && !target.ok && (
          <span className="field-hint" data-testid="move-destination-reasons">
            {target.reasons.join('; ')}
          </span>
        )}
        {target?.note && <span className="field-hint">{target.note}</span>}
      </div>
      <div className="move-fields">
        {!toPve && (
          <TextField
            id="move-namespace"
            label="Namespace"
            value={namespace}
            onValue={setNamespace}
            error={nsProblem}
            disabled={commit.isSuccess}
          />
        )}
        <TextField
          id="move-name"
          label="Name"
          value={name}
          onValue={setName}
          error={vmNameProblem}
          disabled={commit.isSuccess}
        />
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={deleteSource}
          disabled={commit.isSuccess}
          onChange={(e) => setDeleteSource(e.target.checked)}
        />
        Delete {source.name} in {source.context} once the moved {noun} is verified
      </label>
      {!toPve && (
        <label className="check">
          <input
            type="checkbox"
            checked={scratch}
            disabled={commit.isSuccess}
            onChange={(e) => setScratch(e.target.checked)}
          />
          Stage {ct ? 'the volume' : 'each disk'} on the Corral server before the upload (scratch)
        </label>
      )}
      {!commit.isSuccess && <MovePreflightView answer={answer} pending={preflight.isPending} />}
    </ActionDialog>
  );
}
