/**
 * Before cloud-init had its own domain (vm-cloudinit.ts), the Proxmox door stored the `ci*` keys a client sent
 * verbatim in the VM's extras annotation — `cipassword` in plain text on the VirtualMachine. Such a VM is migrated the
 * first time the Proxmox API reads or writes its config (every config path goes through `configContext`): the keys
 * become cloud-init settings (the password hashed into the VM's cloud-init Secret) and leave the annotation, in one
 * patch of the VM. A setting the VM already has wins over its
 * legacy key; a legacy value the domain refuses is dropped (logged), never kept in the annotation.
 */
import type { Caller, DomainDeps } from '@/server/domain/deps';
import { readCloudInit, setCloudInit, settingsToPveKeys, type CloudInitChange } from '@/server/domain/vm-cloudinit';
import { waitFor } from '@/server/domain/vm-hw-wait';
import { cloudInitChange, isCloudInitKey } from './cloudinit-params';
import { EXTRAS_ANNOTATION, parseExtras, serializeExtras } from './extras';
import { Params } from './params';

/** The legacy `ci*` keys in a VM's extras annotation ([] for every VM written since the cloud-init domain). */
export function legacyCloudInitKeys(annotation: string | undefined): string[] {
  if (!annotation || !/"(ci|sshkeys|ipconfig|nameserver|searchdomain)/.test(annotation)) return [];
  return Object.keys(parseExtras(annotation).options).filter(isCloudInitKey);
}

/** Moves a VM's legacy `ci*` keys into its cloud-init settings; returns the keys it found (none: nothing written). */
export async function adoptLegacyCloudInit(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  log: (line: string) => void = () => {},
): Promise<string[]> {
  const vm = deps.cluster.cache.get('VirtualMachine', namespace, name);
  const annotation = vm?.metadata.annotations?.[EXTRAS_ANNOTATION];
  const keys = legacyCloudInitKeys(annotation);
  if (!vm || !keys.length) return [];
  const extras = parseExtras(annotation);
  const current = settingsToPveKeys(...(await currentSettings(deps, namespace, name)));
  const change: CloudInitChange = {};
  for (const key of keys) {
    const value = extras.options[key] ?? '';
    delete extras.options[key];
    if (key in current) continue; // set since through the cloud-init domain: that one is newer
    try {
      const one = cloudInitChange(new Params([[key, value]]));
      Object.assign(change, one, one.ipConfigs ? { ipConfigs: { ...change.ipConfigs, ...one.ipConfigs } } : {});
    } catch {
      log(`[proxmox] VM ${namespace}/${name}: legacy ${key} dropped (not a valid value)`);
    }
  }
  const next = serializeExtras(extras);
  await setCloudInit(deps, caller, namespace, name, change, { annotations: { [EXTRAS_ANNOTATION]: next } });
  // The config paths read the watch cache next: wait until it holds the patched VM.
  await waitFor(
    deps,
    namespace,
    ['VirtualMachine'],
    () => deps.cluster.cache.get('VirtualMachine', namespace, name)?.metadata.annotations?.[EXTRAS_ANNOTATION] === next,
    `the cloud-init migration of VM ${namespace}/${name}`,
  );
  log(`[proxmox] VM ${namespace}/${name}: legacy cloud-init keys ${keys.join(', ')} moved to its cloud-init settings`);
  return keys;
}

async function currentSettings(
  deps: DomainDeps,
  namespace: string,
  name: string,
): Promise<Parameters<typeof settingsToPveKeys>> {
  const state = await readCloudInit(deps, namespace, name);
  return [state.settings, state.passwordSet];
}
