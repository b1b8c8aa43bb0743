/**
 * The vocabulary of a VM's cloud-init around the generated image: where it is kept (annotations, Secret, snippets
 * ConfigMap), the drive in a VM spec, PVE's key names and value formats (`ipconfigN`, URL-encoded `sshkeys`), and a
 * change applied to settings. Pure but for reading snippets; vm-cloudinit.ts stores and attaches.
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { asArray, asDict, asString, templateSpec } from './vm-facts';
import {
  CloudInitFieldError,
  type CloudInitCustom,
  type CloudInitSettings,
  type CloudInitType,
  type IpConfig,
} from './vm-cloudinit-render';

/** The settings, as JSON, on the VM. */
export const CLOUDINIT_ANNOTATION = 'corral.dev/cloudinit';
/** On the Secret: the settings (and a password digest) the stored image was generated from. */
export const GENERATED_ANNOTATION = 'corral.dev/cloudinit-generated';
/** Snippets (`local:snippets/<file>`): keys of this ConfigMap in Corral's namespace. */
export const SNIPPETS_CONFIGMAP = 'corral-snippets';
export const SNIPPET_STORAGE = 'local';
/** The OS type PVE picks the default citype by lives in the Proxmox extras; REST callers set `type` themselves. */
export const OSTYPE_ANNOTATION = 'corral.dev/cloudinit-ostype';

export type CloudInitBus = 'sata' | 'scsi' | 'virtio';

export interface CloudInitDrive {
  /** KubeVirt disk/volume name (`ide2` for a drive a Proxmox client added, `cloudinitdisk` for Corral's). */
  disk: string;
  bus: CloudInitBus;
  type: CloudInitType;
  secret: string;
}

/** A change: a value sets, `null` removes, absent leaves alone. `password` is plain text or a crypt hash. */
export interface CloudInitChange {
  user?: string | null;
  password?: string | null;
  sshKeys?: string[] | null;
  ipConfigs?: Record<string, IpConfig | null>;
  /** `ipConfigs` is the whole set: NICs it does not name lose theirs. */
  replaceIpConfigs?: boolean;
  nameservers?: string[] | null;
  searchDomains?: string[] | null;
  type?: CloudInitType | null;
  upgrade?: boolean | null;
  custom?: CloudInitCustom | null;
}

/** One setting as PVE's `GET …/cloudinit` lists it: in the image (`value`), changed since (`pending`), or removed. */
export interface PendingItem {
  key: string;
  value?: string;
  pending?: string;
  delete?: boolean;
}

export interface CloudInitState {
  drive?: CloudInitDrive;
  settings: CloudInitSettings;
  passwordSet: boolean;
  /** The drive's user-data was written by hand (Corral's create with `cloudInit`), not generated from settings. */
  handWritten: boolean;
  /** Settings whose image has not been generated yet (empty when the image is up to date). */
  pending: PendingItem[];
  /** The type the image is (or will be) generated as. */
  type: CloudInitType;
}

export const MASKED_PASSWORD = '**********';

export function secretNameOf(vm: string): string {
  return `${vm}-cloudinit`;
}

export function decode(data: unknown, key: string): string | undefined {
  const v = asDict(data)[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
}

export const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The cloud-init drive of a VM spec, if any. */
export function cloudInitDrive(vm: KObject): CloudInitDrive | undefined {
  const spec = templateSpec(vm);
  for (const raw of asArray(spec.volumes)) {
    const v = asDict(raw);
    const source = v.cloudInitNoCloud ?? v.cloudInitConfigDrive;
    if (!source) continue;
    const name = asString(v.name);
    const disk = asDict(asArray(asDict(asDict(spec.domain).devices).disks).find((d) => asDict(d).name === name));
    const dev = asDict(disk.cdrom ?? disk.disk);
    const bus = asString(dev.bus);
    return {
      disk: name,
      bus: bus === 'scsi' || bus === 'virtio' ? bus : 'sata',
      type: v.cloudInitConfigDrive ? 'configdrive2' : 'nocloud',
      secret: asString(asDict(asDict(source).secretRef).name),
    };
  }
  return undefined;
}

/** PVE's key for each setting and its value the way PVE prints it (sshkeys URL-encoded, password masked). */
export function settingsToPveKeys(s: CloudInitSettings, passwordSet: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (s.user !== undefined) out.ciuser = s.user;
  if (passwordSet) out.cipassword = MASKED_PASSWORD;
  if (s.sshKeys.length) out.sshkeys = encodeSshKeys(s.sshKeys);
  for (const [i, c] of Object.entries(s.ipConfigs)) out[`ipconfig${i}`] = formatIpConfig(c);
  if (s.nameservers.length) out.nameserver = s.nameservers.join(' ');
  if (s.searchDomains.length) out.searchdomain = s.searchDomains.join(' ');
  if (s.type) out.citype = s.type;
  if (s.upgrade !== undefined) out.ciupgrade = s.upgrade ? '1' : '0';
  const custom = Object.entries(s.custom).filter(([, v]) => v !== undefined);
  if (custom.length) out.cicustom = custom.map(([k, v]) => `${k}=${v}`).join(',');
  return out;
}

/** `ip=10.0.0.5/24,gw=10.0.0.1` — PVE's property-string order. */
export function formatIpConfig(c: IpConfig): string {
  return (['ip', 'gw', 'ip6', 'gw6'] as const)
    .filter((k) => c[k] !== undefined)
    .map((k) => `${k}=${c[k]}`)
    .join(',');
}

/** PVE stores the keys URL-encoded (uri_escape: everything but A-Z a-z 0-9 - _ . ~), one key per line. */
export function encodeSshKeys(keys: string[]): string {
  return [...Buffer.from(`${keys.join('\n')}\n`, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** The lines of an `sshkeys` value as PVE reads it (URL-decoded; blank lines dropped). */
export function decodeSshKeys(value: string): string[] {
  let text: string;
  try {
    text = decodeURIComponent(value.replace(/\+/g, '%2B'));
  } catch {
    throw new CloudInitFieldError('sshkeys', 'invalid URL encoding');
  }
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

export function applyChange(base: CloudInitSettings, change: CloudInitChange): CloudInitSettings {
  const s: CloudInitSettings = {
    ...base,
    ipConfigs: { ...base.ipConfigs },
    custom: { ...base.custom },
  };
  if (change.user !== undefined) {
    if (change.user === null) delete s.user;
    else s.user = change.user;
  }
  if (change.sshKeys !== undefined) s.sshKeys = change.sshKeys ?? [];
  if (change.nameservers !== undefined) s.nameservers = change.nameservers ?? [];
  if (change.searchDomains !== undefined) s.searchDomains = change.searchDomains ?? [];
  if (change.type !== undefined) {
    if (change.type === null) delete s.type;
    else s.type = change.type;
  }
  if (change.upgrade !== undefined) {
    if (change.upgrade === null) delete s.upgrade;
    else s.upgrade = change.upgrade;
  }
  if (change.custom !== undefined) s.custom = change.custom ?? {};
  if (change.replaceIpConfigs) s.ipConfigs = {};
  for (const [i, c] of Object.entries(change.ipConfigs ?? {})) {
    if (c === null) delete s.ipConfigs[i];
    else s.ipConfigs[i] = c;
  }
  return s;
}

/** MACs of the VM's NICs by PVE index: a NIC named `netN` is index N, the others take their list position. */
export function nicMacs(vm: KObject): string[] {
  const ifaces = asArray(asDict(asDict(templateSpec(vm).domain).devices).interfaces).map(asDict);
  const out: string[] = [];
  ifaces.forEach((iface, i) => {
    const m = /^net(\d+)$/.exec(asString(iface.name));
    const index = m ? Number(m[1]) : i;
    out[index] = asString(iface.macAddress).toLowerCase();
  });
  return Array.from(out, (m) => m ?? '');
}

export async function readSnippets(
  deps: DomainDeps,
  custom: CloudInitCustom,
): Promise<{ user?: string; network?: string }> {
  const wanted = (['user', 'network'] as const).filter((k) => custom[k] !== undefined);
  if (!wanted.length) return {};
  const cm = await deps.cluster.fetch('ConfigMap', deps.config.defaultNamespace, SNIPPETS_CONFIGMAP);
  const out: { user?: string; network?: string } = {};
  for (const k of wanted) {
    const ref = custom[k]!;
    const [storage, path] = [ref.slice(0, ref.indexOf(':')), ref.slice(ref.indexOf(':') + 1)];
    if (storage !== SNIPPET_STORAGE)
      throw new CloudInitFieldError('cicustom', `${k}: storage '${storage}' does not support content-type 'snippets'`);
    const text = asDict(cm?.data)[path.replace(/^snippets\//, '')];
    if (typeof text !== 'string') throw new CloudInitFieldError('cicustom', `${k}: volume '${ref}' does not exist`);
    out[k] = text;
  }
  return out;
}

/** Snippet files of the `local` storage: name, size (bytes) and the ConfigMap's creation time. */
export async function listSnippets(deps: DomainDeps): Promise<{ volid: string; size: number; ctime: number }[]> {
  const cm = await deps.cluster.fetch('ConfigMap', deps.config.defaultNamespace, SNIPPETS_CONFIGMAP);
  const ctime = Math.floor(Date.parse(cm?.metadata.creationTimestamp ?? '') / 1000) || 0;
  return Object.entries(asDict(cm?.data))
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .map(([file, text]) => ({ volid: `${SNIPPET_STORAGE}:snippets/${file}`, size: Buffer.byteLength(text), ctime }))
    .sort((a, b) => a.volid.localeCompare(b.volid));
}
