/**
 * Proxmox settings KubeVirt has no field for (description, ostype, boot order text, per-disk and per-NIC
 * options such as `iothread` or `firewall`, the storage id a disk was requested on, empty CD-ROM drives) live in
 * one annotation on the VM, so a config read echoes exactly what a client wrote — Ansible and Terraform compare
 * what they sent with what they read back. (`onboot` is not kept here: it is the run strategy, read and set through
 * the domain's start on boot.)
 */
export const EXTRAS_ANNOTATION = 'corral.io/proxmox-config';

export interface DiskExtras {
  /** The storage id the client named (`local-lvm`), echoed instead of the StorageClass it resolved to. */
  storage?: string;
  /** The volume the client named (`iso/debian-12.iso`), echoed instead of the claim it resolved to. */
  volume?: string;
  options: Record<string, string>;
  /** An empty CD-ROM drive (`none,media=cdrom`): it has no KubeVirt disk. */
  empty?: boolean;
}

export interface NetExtras {
  bridge?: string;
  /** The PVE model when KubeVirt has no equivalent (vmxnet3 runs as virtio). */
  model?: string;
  options: Record<string, string>;
}

export interface Extras {
  options: Record<string, string>;
  disks: Record<string, DiskExtras>;
  nets: Record<string, NetExtras>;
}

export function emptyExtras(): Extras {
  return { options: {}, disks: {}, nets: {} };
}

const isDict = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function strings(v: unknown): Record<string, string> {
  if (!isDict(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Tolerant: a hand-edited or foreign annotation degrades to "no extras", never to an error. */
export function parseExtras(text: string | undefined): Extras {
  if (!text) return emptyExtras();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return emptyExtras();
  }
  if (!isDict(raw)) return emptyExtras();
  const disks: Record<string, DiskExtras> = {};
  if (isDict(raw.disks))
    for (const [k, v] of Object.entries(raw.disks)) {
      if (!isDict(v)) continue;
      disks[k] = {
        options: strings(v.options),
        ...(typeof v.storage === 'string' ? { storage: v.storage } : {}),
        ...(typeof v.volume === 'string' ? { volume: v.volume } : {}),
        ...(v.empty === true ? { empty: true } : {}),
      };
    }
  const nets: Record<string, NetExtras> = {};
  if (isDict(raw.nets))
    for (const [k, v] of Object.entries(raw.nets)) {
      if (!isDict(v)) continue;
      nets[k] = {
        options: strings(v.options),
        ...(typeof v.bridge === 'string' ? { bridge: v.bridge } : {}),
        ...(typeof v.model === 'string' ? { model: v.model } : {}),
      };
    }
  return { options: strings(raw.options), disks, nets };
}

export function serializeExtras(extras: Extras): string {
  return JSON.stringify(extras);
}
