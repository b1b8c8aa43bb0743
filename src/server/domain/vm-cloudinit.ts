/**
 * A VM's cloud-init: the settings (an annotation on the VM, no secret in it), the password (hashed, in the VM's
 * cloud-init Secret), and the generated image — user-data and network-data in that Secret, which the VM's
 * cloudInitNoCloud / cloudInitConfigDrive volume references (`secretRef`, `networkDataSecretRef`), so neither the
 * VM object nor its VMI ever carries a credential. Like PVE, the image is regenerated on demand; a stopped VM's
 * image is regenerated with every change (its next boot reads it), a running VM's changes stay pending until
 * "Regenerate image", so the current/pending view says what the guest booted with.
 */
import { createHash } from 'node:crypto';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { hashPassword, isCryptHash } from '../../lib/sha-crypt';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, templateSpec, vmiActive } from './vm-facts';
import { liveVm } from './vm-hw-facts';
import {
  CloudInitFieldError,
  canonical,
  emptySettings,
  parseSettings,
  renderImage,
  resolvedType,
  validateSettings,
  type CloudInitSettings,
  type CloudInitType,
  type RenderedImage,
} from './vm-cloudinit-render';
import {
  CLOUDINIT_ANNOTATION,
  GENERATED_ANNOTATION,
  OSTYPE_ANNOTATION,
  applyChange,
  b64,
  cloudInitDrive,
  decode,
  nicMacs,
  readSnippets,
  secretNameOf,
  settingsToPveKeys,
  type CloudInitBus,
  type CloudInitChange,
  type CloudInitState,
  type PendingItem,
} from './vm-cloudinit-keys';
import { patchVmFrom } from './vm-patch';
import { ownedLabels } from './vm-spec';

export * from './vm-cloudinit-render';
export * from './vm-cloudinit-keys';

interface Loaded {
  vm: KObject;
  secret: KObject | undefined;
  state: CloudInitState;
  passwordHash: string | undefined;
}

const digestOf = (hash: string | undefined) =>
  hash === undefined ? '' : createHash('sha256').update(hash).digest('hex').slice(0, 16);

async function load(deps: DomainDeps, namespace: string, name: string, vm?: KObject): Promise<Loaded> {
  const v = vm ?? requireVm(deps, namespace, name);
  const drive = cloudInitDrive(v);
  const annotations = v.metadata.annotations ?? {};
  const stored = parseSettings(annotations[CLOUDINIT_ANNOTATION]);
  const secret = await deps.cluster.fetch('Secret', namespace, drive?.secret || secretNameOf(name));
  const passwordHash = decode(secret?.data, 'password');
  const handWritten = !!drive && stored === undefined && decode(secret?.data, 'userdata') !== undefined;
  const settings = stored ?? emptySettings();
  const type = resolvedType(settings, annotations[OSTYPE_ANNOTATION]);
  const now = settingsToPveKeys(settings, passwordHash !== undefined);
  const genRaw = secret?.metadata.annotations?.[GENERATED_ANNOTATION];
  const pending: PendingItem[] = [];
  if (drive && !handWritten) {
    let generated: Record<string, string> = {};
    let genPassword = '';
    try {
      const g = JSON.parse(genRaw ?? 'null') as { settings?: unknown; password?: unknown } | null;
      const gs = parseSettings(JSON.stringify(g?.settings ?? null));
      genPassword = typeof g?.password === 'string' ? g.password : '';
      if (gs) generated = settingsToPveKeys(gs, genPassword !== '');
    } catch {
      generated = {};
    }
    const passwordChanged = genPassword !== digestOf(passwordHash);
    for (const key of [...new Set([...Object.keys(generated), ...Object.keys(now)])].sort()) {
      const before = generated[key];
      const after = now[key];
      if (before === undefined) pending.push({ key, pending: after! });
      else if (after === undefined) pending.push({ key, value: before, delete: true });
      else if (before !== after || (key === 'cipassword' && passwordChanged))
        pending.push({ key, value: before, pending: after });
    }
  }
  return {
    vm: v,
    secret,
    passwordHash,
    state: {
      ...(drive ? { drive } : {}),
      settings,
      passwordSet: passwordHash !== undefined,
      handWritten,
      pending,
      type,
    },
  };
}

export async function readCloudInit(deps: DomainDeps, namespace: string, name: string): Promise<CloudInitState> {
  return (await load(deps, namespace, name)).state;
}

/** Every setting with its value, as PVE's `GET …/cloudinit` lists them (pending ones carry both). */
export function pveCloudInitItems(state: CloudInitState): PendingItem[] {
  const now = settingsToPveKeys(state.settings, state.passwordSet);
  const byKey = new Map(state.pending.map((p) => [p.key, p]));
  const out: PendingItem[] = [];
  for (const key of Object.keys(now).sort()) out.push(byKey.get(key) ?? { key, value: now[key]! });
  for (const p of state.pending) if (!(p.key in now)) out.push(p);
  return out;
}

async function render(deps: DomainDeps, loaded: Loaded, type: CloudInitType): Promise<RenderedImage> {
  const { vm, state } = loaded;
  return renderImage(
    {
      settings: state.settings,
      ...(loaded.passwordHash !== undefined ? { passwordHash: loaded.passwordHash } : {}),
      hostname: vm.metadata.name ?? '',
      macs: nicMacs(vm),
      snippets: await readSnippets(deps, state.settings.custom),
    },
    type,
  );
}

/** What `GET …/cloudinit/dump?type=user|network|meta` shows: the image the settings make now. */
export async function dumpCloudInit(
  deps: DomainDeps,
  namespace: string,
  name: string,
  part: 'user' | 'network' | 'meta',
): Promise<string> {
  const loaded = await load(deps, namespace, name);
  if (loaded.state.handWritten) {
    const data = loaded.secret?.data;
    if (part === 'user') return decode(data, 'userdata') ?? '';
    if (part === 'network') return decode(data, 'networkdata') ?? '';
  }
  const image = await render(deps, loaded, loaded.state.drive?.type ?? loaded.state.type);
  return part === 'user' ? image.userData : part === 'network' ? image.networkData : image.metaData;
}

function secretObject(
  namespace: string,
  vm: string,
  name: string,
  data: Record<string, string>,
  generated?: string,
): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: ownedLabels(vm),
      ...(generated ? { annotations: { [GENERATED_ANNOTATION]: generated } } : {}),
    },
    type: 'Opaque',
    data,
  };
}

function volumeFor(disk: string, secret: string, type: CloudInitType): Record<string, unknown> {
  const source = { secretRef: { name: secret }, networkDataSecretRef: { name: secret } };
  return type === 'configdrive2'
    ? { name: disk, cloudInitConfigDrive: source }
    : { name: disk, cloudInitNoCloud: source };
}

function diskFor(disk: string, bus: CloudInitBus): Record<string, unknown> {
  // A CD-ROM like PVE's cloud-init drive; KubeVirt's CD-ROMs sit on SATA or SCSI.
  return { name: disk, cdrom: { bus: bus === 'virtio' ? 'sata' : bus, readonly: true } };
}

function hashOf(password: string): string {
  if (password.length > 256) throw new CloudInitFieldError('cipassword', 'value may only be 256 characters long');
  return isCryptHash(password) ? password : hashPassword(password);
}

function generatedText(settings: CloudInitSettings, hash: string | undefined): string {
  return JSON.stringify({ settings: JSON.parse(canonical(settings)) as unknown, password: digestOf(hash) });
}

/** The Secret's data for an image: user-data, network-data, meta-data (for the dump) and the password hash. */
function imageData(image: RenderedImage, hash: string | undefined): Record<string, string> {
  return {
    userdata: b64(image.userData),
    networkdata: b64(image.networkData),
    metadata: b64(image.metaData),
    ...(hash !== undefined ? { password: b64(hash) } : {}),
  };
}

/**
 * The objects a new VM's cloud-init drive needs, for the create path: the Secret (written before the VM), the
 * disk and volume entries, and the annotation. Validates first, so a bad value fails before anything exists.
 */
export async function cloudInitForCreate(
  deps: DomainDeps,
  vm: { name: string; namespace: string; macs: string[]; ostype?: string },
  change: CloudInitChange,
  drive: { disk: string; bus: CloudInitBus } | undefined,
): Promise<{
  secret: KObject;
  drive?: { disk: Record<string, unknown>; volume: Record<string, unknown> };
  annotations: Record<string, string>;
}> {
  const settings = validateSettings(applyChange(emptySettings(), change));
  const hash = change.password ? hashOf(change.password) : undefined;
  const type = resolvedType(settings, vm.ostype);
  const image = renderImage(
    {
      settings,
      ...(hash !== undefined ? { passwordHash: hash } : {}),
      hostname: vm.name,
      macs: vm.macs.map((m) => m.toLowerCase()),
      snippets: await readSnippets(deps, settings.custom),
    },
    type,
  );
  const name = secretNameOf(vm.name);
  return {
    secret: secretObject(vm.namespace, vm.name, name, imageData(image, hash), generatedText(settings, hash)),
    ...(drive ? { drive: { disk: diskFor(drive.disk, drive.bus), volume: volumeFor(drive.disk, name, type) } } : {}),
    annotations: {
      [CLOUDINIT_ANNOTATION]: canonical(settings),
      ...(vm.ostype ? { [OSTYPE_ANNOTATION]: vm.ostype } : {}),
    },
  };
}

/** Validates a change against a VM's settings (values, snippets, password) without writing anything. */
export async function checkCloudInit(
  deps: DomainDeps,
  namespace: string,
  name: string,
  change: CloudInitChange,
): Promise<void> {
  const { state } = await load(deps, namespace, name);
  if (state.handWritten) throw handWrittenConflict(namespace, name, state.drive?.secret);
  const settings = validateSettings(applyChange(state.settings, change));
  if (change.password) hashOf(change.password);
  await readSnippets(deps, settings.custom);
}

function handWrittenConflict(namespace: string, name: string, secret: string | undefined): CorralError {
  return new CorralError(
    'CONFLICT',
    `VM ${namespace}/${name}'s cloud-init user data was written by hand at create; edit its Secret ${secret ?? ''}, or remove the drive and add one to generate it from settings`,
  );
}

export interface CloudInitOptions {
  /** Add a drive (when the VM has none) on this disk name and bus; `remove` detaches the drive. */
  drive?: { disk: string; bus: CloudInitBus } | 'remove';
  /** The guest OS type PVE picks the default citype by (Proxmox `ostype`). */
  ostype?: string;
  /** Regenerate the image even while the VM runs (PUT …/cloudinit, "Regenerate image"). */
  regenerate?: boolean;
  /** More annotations for the same VM patch (the Proxmox door's extras, rid of legacy plaintext `ci*` keys). */
  annotations?: Record<string, string>;
}

/**
 * Changes settings and/or the drive. A stopped VM's image is regenerated at once (its next boot reads it); a running
 * VM keeps the image it booted with and shows the change as pending until `regenerate`. Returns the task id.
 */
export async function setCloudInit(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  change: CloudInitChange,
  options: CloudInitOptions = {},
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const before = await load(deps, namespace, name, vm);
  if (before.state.handWritten && Object.keys(change).length)
    throw handWrittenConflict(namespace, name, before.state.drive?.secret);
  const settings = validateSettings(applyChange(before.state.settings, change));
  const hash =
    change.password === undefined
      ? before.passwordHash
      : change.password === null
        ? undefined
        : hashOf(change.password);
  const ostype = options.ostype ?? vm.metadata.annotations?.[OSTYPE_ANNOTATION];
  const type = resolvedType(settings, ostype);
  const snippets = await readSnippets(deps, settings.custom); // refuses a missing snippet before anything is written
  const running = vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
  const removing = options.drive === 'remove';
  if (removing && !before.state.drive)
    throw new CloudInitFieldError('delete', `VM ${namespace}/${name} has no cloud-init drive`);
  if (options.drive && options.drive !== 'remove' && before.state.drive)
    throw new CloudInitFieldError(
      options.drive.disk,
      `only one cloud-init drive is allowed (the VM has one on ${before.state.drive.disk})`,
    );
  const adding = options.drive && options.drive !== 'remove' ? options.drive : undefined;
  const drive = removing ? undefined : (adding ?? before.state.drive);
  const regenerate = !!drive && (options.regenerate || !running || !!adding);
  const secretName = before.state.drive?.secret || secretNameOf(name);
  const what = [
    Object.keys(change).length ? `settings (${Object.keys(change).join(', ')})` : '',
    adding ? `drive ${adding.disk}` : '',
    removing ? `drive ${before.state.drive?.disk} removed` : '',
    regenerate ? 'image regenerated' : '',
  ]
    .filter(Boolean)
    .join('; ');
  return runAsTask(deps.journal, 'cloudinit', `${namespace}/${name}`, caller.identity.login, async (task) => {
    // The Secret first: a drive must never reference a Secret that is not there yet.
    const data: Record<string, string> = { ...((before.secret?.data as Record<string, string> | undefined) ?? {}) };
    delete data.password;
    if (hash !== undefined) data.password = b64(hash);
    let generated = before.secret?.metadata.annotations?.[GENERATED_ANNOTATION];
    if (regenerate) {
      const image = renderImage(
        {
          settings,
          ...(hash !== undefined ? { passwordHash: hash } : {}),
          hostname: name,
          macs: nicMacs(vm),
          snippets,
        },
        type,
      );
      Object.assign(data, imageData(image, hash));
      generated = generatedText(settings, hash);
    }
    const secret = secretObject(namespace, name, secretName, data, generated);
    if (before.secret) {
      // A merge patch cannot drop a key by omission; the whole data map is replaced instead.
      await deps.cluster.patch('Secret', namespace, secretName, {
        metadata: { annotations: { [GENERATED_ANNOTATION]: generated ?? null } },
        data: Object.fromEntries(
          [...new Set([...Object.keys(asDict(before.secret.data)), ...Object.keys(data)])].map((k) => [
            k,
            data[k] ?? null,
          ]),
        ),
      });
    } else await deps.cluster.create('Secret', secret);
    const tspec = templateSpec(vm);
    const disks = asArray(asDict(asDict(tspec.domain).devices).disks);
    const volumes = asArray(tspec.volumes);
    const current = before.state.drive;
    let spec: Record<string, unknown> | undefined;
    if (adding)
      spec = {
        domain: { devices: { disks: [...disks, diskFor(adding.disk, adding.bus)] } },
        volumes: [...volumes, volumeFor(adding.disk, secretName, type)],
      };
    else if (removing && current)
      spec = {
        domain: { devices: { disks: disks.filter((d) => asDict(d).name !== current.disk) } },
        volumes: volumes.filter((v) => asDict(v).name !== current.disk),
      };
    else if (current && regenerate && current.type !== type)
      spec = {
        volumes: volumes.map((v) => (asDict(v).name === current.disk ? volumeFor(current.disk, secretName, type) : v)),
      };
    // Under the resourceVersion the change was computed from; a status write meanwhile is no conflict (vm-patch.ts).
    await patchVmFrom(deps, vm, {
      metadata: {
        annotations: {
          ...options.annotations,
          [CLOUDINIT_ANNOTATION]: canonical(settings),
          ...(options.ostype ? { [OSTYPE_ANNOTATION]: options.ostype } : {}),
        },
      },
      ...(spec ? { spec: { template: { spec } } } : {}),
    });
    task.done(
      `cloud-init: ${what || 'no change'}${!regenerate && drive && running ? ' (pending until the image is regenerated)' : ''}`,
    );
    return task.id;
  });
}

/** PUT …/cloudinit, "Regenerate image": the image is made from the current settings. */
export async function regenerateCloudInit(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
): Promise<string> {
  const state = await readCloudInit(deps, namespace, name);
  if (!state.drive) throw new CorralError('CONFLICT', `VM ${namespace}/${name} has no cloud-init drive to regenerate`);
  if (state.handWritten)
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name}'s cloud-init user data was written by hand; there is nothing to generate it from`,
    );
  return setCloudInit(deps, caller, namespace, name, {}, { regenerate: true });
}

/** Regenerates the image when settings are pending (what PVE does at every start); nothing otherwise. */
export async function refreshCloudInit(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
): Promise<void> {
  const state = await readCloudInit(deps, namespace, name);
  if (state.drive && !state.handWritten && state.pending.length)
    await setCloudInit(deps, caller, namespace, name, {}, { regenerate: true });
}
