'use client';
// "Create CT": image from a small catalog of container images or any reference, CPU, memory, disk, StorageClass,
// privileged. Posts cts.create and follows its task; once the CT runs its page opens.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { useTask } from '../../lib/live';
import { useSession } from '../../lib/session';
import { useTRPC } from '../../lib/trpc';
import { cpuProblem, diskProblem, imageRefProblem, memoryProblem, nameProblem } from '../../lib/validation';
import { ActionDialog } from '../vm/ActionDialog';
import { TaskProgress } from '../vm/SnapshotsTab';
import { ctHref } from './use-cts';
import { TextField } from '../TextField';

/** A few container images people start a pet container from. */
export const CT_CATALOG = [
  { image: 'docker.io/library/debian:bookworm', label: 'Debian 12 (bookworm)' },
  { image: 'docker.io/library/ubuntu:24.04', label: 'Ubuntu 24.04' },
  { image: 'docker.io/library/alpine:3.20', label: 'Alpine 3.20' },
  { image: 'registry.fedoraproject.org/fedora:42', label: 'Fedora 42' },
  { image: 'docker.io/library/archlinux:latest', label: 'Arch Linux' },
] as const;
const OTHER = '';

export function CreateCtDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const session = useSession();
  const [name, setName] = useState('');
  const [choice, setChoice] = useState<string>(CT_CATALOG[0].image);
  const [custom, setCustom] = useState('');
  const [cpu, setCpu] = useState(1);
  const [mem, setMem] = useState('1Gi');
  const [disk, setDisk] = useState('8Gi');
  const [storageClass, setStorageClass] = useState('');
  const [privileged, setPrivileged] = useState(false);
  const create = useMutation(trpc.cts.create.mutationOptions());
  const task = useTask(create.data?.task ?? null);
  useEffect(() => {
    if (task?.status === 'done' && create.data) {
      onClose();
      router.push(ctHref(create.data.namespace, create.data.name, 'summary'));
      create.reset();
    }
  }, [task?.status]);
  useEffect(() => {
    if (open) setStorageClass(session.capabilities?.storageClass ?? '');
  }, [open]);

  const image = choice === OTHER ? custom.trim() : choice;
  const problem =
    nameProblem(name) ??
    imageRefProblem(image) ??
    cpuProblem(cpu) ??
    memoryProblem(mem) ??
    diskProblem(disk) ??
    (storageClass && nameProblem(storageClass.replace(/\./g, '-')) ? 'StorageClass: lower-case name' : null);
  const close = () => {
    create.reset();
    onClose();
  };
  return (
    <ActionDialog
      title="Create CT"
      open={open}
      onClose={close}
      label="Create"
      busyLabel="Creating…"
      busy={create.isPending}
      error={create.error}
      problem={problem}
      done={create.isSuccess}
      form={{
        id: 'create-ct-form',
        onSubmit: () => {
          if (problem !== null) return;
          create.mutate({ name, image, cpu, mem, disk, storageClass, privileged });
        },
      }}
      after={
        create.isSuccess && (
          <div data-testid="ct-create-progress">
            {task ? <TaskProgress task={task} /> : <span className="page-sub">Task {create.data.task} started…</span>}
          </div>
        )
      }
    >
      <p className="page-sub" style={{ margin: 0 }}>
        A container is a pod with its own data volume: Stop keeps the volume, Start brings the same container back.
      </p>
      <TextField
        id="ct-name"
        label="Name"
        value={name}
        disabled={create.isSuccess}
        onValue={setName}
        error={name && nameProblem(name)}
      />
      <div className="field">
        <label htmlFor="ct-image">Image</label>
        <select id="ct-image" value={choice} disabled={create.isSuccess} onChange={(e) => setChoice(e.target.value)}>
          {CT_CATALOG.map((c) => (
            <option key={c.image} value={c.image}>
              {c.label} — {c.image}
            </option>
          ))}
          <option value={OTHER}>Other image reference…</option>
        </select>
        {choice === OTHER && (
          <input
            id="ct-image-ref"
            aria-label="Image reference"
            placeholder="ghcr.io/me/toolbox:latest"
            value={custom}
            spellCheck={false}
            disabled={create.isSuccess}
            onChange={(e) => setCustom(e.target.value)}
          />
        )}
        {choice === OTHER && custom && imageRefProblem(custom) && (
          <span className="field-error">{imageRefProblem(custom)}</span>
        )}
      </div>
      <div className="grid-2" style={{ gap: 10 }}>
        <div className="field">
          <label htmlFor="ct-cpu">CPU cores</label>
          <input
            id="ct-cpu"
            type="number"
            min={1}
            max={64}
            value={cpu}
            disabled={create.isSuccess}
            onChange={(e) => setCpu(Number(e.target.value))}
          />
        </div>
        <div className="field">
          <label htmlFor="ct-mem">Memory</label>
          <input id="ct-mem" value={mem} disabled={create.isSuccess} onChange={(e) => setMem(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="ct-disk">Data volume</label>
          <input id="ct-disk" value={disk} disabled={create.isSuccess} onChange={(e) => setDisk(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="ct-sc">StorageClass</label>
          <input
            id="ct-sc"
            value={storageClass}
            placeholder="cluster default"
            disabled={create.isSuccess}
            onChange={(e) => setStorageClass(e.target.value)}
          />
        </div>
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={privileged}
          disabled={create.isSuccess}
          onChange={(e) => setPrivileged(e.target.checked)}
        />{' '}
        Privileged: copy the image&apos;s root file system onto the volume and run inside it, so installed packages and
        dotfiles survive Stop/Start
      </label>
    </ActionDialog>
  );
}
