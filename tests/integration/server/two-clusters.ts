/**
 * What the move tests share (move.test.ts, move-pve.test.ts): two embedded clusters `home` and `lab` started side by
 * side, the options each of their Corrals starts with (API only, quick polls), a VM imported from a cloud image
 * with a disk content of its own, and the bytes an export session hands out. Each test file still starts its own
 * Corrals: one serving both clusters for a move between them, or one per cluster for a move to a PVE host.
 */
import { expect } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import type { StartOptions } from '@/server/start';
import type { ExportSession, openVmExport } from '@/server/domain/vm-export';
import { eventually, type Harness } from './harness';

export const NS = 'tailvm';
export const PVCS = '/persistentvolumeclaims';
export const DVS = 'cdi.kubevirt.io/datavolumes';
export const VMS = 'kubevirt.io/virtualmachines';
export const VMIS = 'kubevirt.io/virtualmachineinstances';
/** The embedded cluster's record of what a disk holds (its export hands out bytes made from it). */
export const CONTENT = 'sim.corral.dev/disk-content';
export const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';
/** An admin caller, for opening an export session in-process. */
export const ADMIN = { identity: { login: 'test', admin: true } } as Parameters<typeof openVmExport>[1];

export const phaseOf = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;

/** A preflight's answer (POST /api/move/preflight), the fields the move tests read. */
export interface Preflight {
  ok: boolean;
  refusals: { reason: string; remedy: string }[];
  warnings: string[];
  dropped: string[];
  plan: {
    source: { running: boolean };
    destination: { node?: string };
    disks: { to: string; storageClass: string }[];
    steps: string[];
  };
}

export interface TwoClusters {
  home: EmbeddedCluster;
  lab: EmbeddedCluster;
}

/** `home` and `lab`, empty, at 50× speed, on free ports. */
export async function startClusters(): Promise<TwoClusters> {
  const [home, lab] = await Promise.all(
    (['home', 'lab'] as const).map((contextName) =>
      startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50, contextName }),
    ),
  );
  return { home: home!, lab: lab! };
}

/** What every Corral of the move tests starts with, besides the clusters it serves (`kube`, `moreClusters`). */
export const CORRAL_OPTIONS = {
  demo: true,
  port: 0,
  host: '127.0.0.1',
  next: false,
  plugins: false,
  requestTimeoutMs: 2000,
  config: { pollMs: 50, waitTimeoutMs: 30_000 },
} satisfies Omit<StartOptions, 'kube'>;

/**
 * Creates VM `name` (2 GB disk imported from IMAGE_URL, 1 GB memory) through `api` and waits until its disk
 * `<name>-disk` is Bound and its DataVolume Succeeded in `sim`; with `content`, the disk holds that from then on.
 * `context` names the cluster for a Corral that serves more than one.
 */
export async function createVm(
  api: Pick<Harness, 'post'>,
  sim: EmbeddedCluster,
  name: string,
  options: { context?: string; content?: string; cpu?: number } = {},
): Promise<void> {
  const { context, content, cpu = 1 } = options;
  const made = await api.post('/api/vms', {
    name,
    import: IMAGE_URL,
    disk: '2G',
    mem: '1G',
    cpu,
    ...(context ? { context } : {}),
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await eventually(
    () =>
      phaseOf(sim.store.get(PVCS, NS, `${name}-disk`)) === 'Bound' &&
      phaseOf(sim.store.get(DVS, NS, `${name}-disk`)) === 'Succeeded',
    30_000,
    `${name}'s disk imported`,
  );
  if (content)
    sim.store.mutate(PVCS, NS, `${name}-disk`, (pvc) => {
      pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), [CONTENT]: content };
    });
}

/** The raw bytes an open export session hands out (its token sent as KubeVirt's export server asks); then closes it. */
export async function exportedBytes(open: Promise<ExportSession>): Promise<Buffer> {
  const session = await open;
  try {
    const res = await fetch(session.url, { headers: { 'x-kubevirt-export-token': session.token } });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  } finally {
    await session.close();
  }
}
