/**
 * PVE's cloud-init keys (`ciuser`, `cipassword`, `sshkeys`, `ipconfigN`, `nameserver`, `searchdomain`, `citype`,
 * `ciupgrade`, `cicustom`) read from a create/config request into the domain's change, with PVE's 400s naming the
 * parameter. `delete=ciuser,ipconfig0` removes them.
 */
import {
  CloudInitFieldError,
  decodeSshKeys,
  type CloudInitChange,
  type CloudInitCustom,
  type IpConfig,
} from '@/server/domain/vm-cloudinit';
import type { Params } from './params';
import { parsePropertyString } from './translate/property-string';
import { paramError } from './wire';

const SCALAR_KEYS = [
  'ciuser',
  'cipassword',
  'sshkeys',
  'nameserver',
  'searchdomain',
  'citype',
  'ciupgrade',
  'cicustom',
];

export function isCloudInitKey(key: string): boolean {
  if (SCALAR_KEYS.includes(key)) return true;
  const m = /^ipconfig(\d+)$/.exec(key);
  return !!m && Number(m[1]) <= 31;
}

const schemaError = (key: string, why: string) => paramError({ [key]: why });

/** `ip=10.0.0.5/24,gw=10.0.0.1,ip6=auto` → the domain's IpConfig; unknown properties are PVE's 400. */
export function parseIpConfig(key: string, text: string): IpConfig {
  const parsed = parsePropertyString(text);
  if (parsed.head !== undefined)
    throw schemaError(key, `invalid format - value without key, but schema does not define a default key`);
  const out: IpConfig = {};
  for (const [k, v] of parsed.props) {
    if (k !== 'ip' && k !== 'gw' && k !== 'ip6' && k !== 'gw6')
      throw schemaError(key, `invalid format - property '${k}' is not defined in schema`);
    out[k] = v;
  }
  return out;
}

function parseCustom(text: string): CloudInitCustom {
  const parsed = parsePropertyString(text);
  if (parsed.head !== undefined)
    throw schemaError('cicustom', `invalid format - value without key, but schema does not define a default key`);
  const out: CloudInitCustom = {};
  for (const [k, v] of parsed.props) {
    if (k !== 'user' && k !== 'network' && k !== 'meta' && k !== 'vendor')
      throw schemaError('cicustom', `invalid format - property '${k}' is not defined in schema`);
    out[k] = v;
  }
  return out;
}

const words = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

/** The cloud-init part of a request; `{}` when it names none. Throws PVE's 400 naming the bad parameter. */
export function cloudInitChange(args: Params, deletes: string[] = []): CloudInitChange {
  const change: CloudInitChange = {};
  const ipConfigs: Record<string, IpConfig | null> = {};
  for (const key of deletes.filter(isCloudInitKey)) {
    const ip = /^ipconfig(\d+)$/.exec(key);
    if (ip) ipConfigs[ip[1]!] = null;
    else if (key === 'ciuser') change.user = null;
    else if (key === 'cipassword') change.password = null;
    else if (key === 'sshkeys') change.sshKeys = null;
    else if (key === 'nameserver') change.nameservers = null;
    else if (key === 'searchdomain') change.searchDomains = null;
    else if (key === 'citype') change.type = null;
    else if (key === 'ciupgrade') change.upgrade = null;
    else if (key === 'cicustom') change.custom = null;
  }
  for (const key of args.keys().filter(isCloudInitKey)) {
    const value = args.raw(key) ?? '';
    const ip = /^ipconfig(\d+)$/.exec(key);
    try {
      if (ip) ipConfigs[ip[1]!] = parseIpConfig(key, value);
      else if (key === 'ciuser') change.user = value;
      else if (key === 'cipassword') change.password = value;
      else if (key === 'sshkeys') change.sshKeys = decodeSshKeys(value);
      else if (key === 'nameserver') change.nameservers = words(value);
      else if (key === 'searchdomain') change.searchDomains = words(value);
      else if (key === 'citype') {
        if (value === 'opennebula')
          throw schemaError(key, `opennebula is not served: KubeVirt attaches NoCloud or ConfigDrive volumes only`);
        if (value !== 'nocloud' && value !== 'configdrive2')
          throw schemaError(
            key,
            `value '${value}' does not have a value in the enumeration 'configdrive2, nocloud, opennebula'`,
          );
        change.type = value;
      } else if (key === 'ciupgrade') change.upgrade = args.bool(key) ?? null;
      else if (key === 'cicustom') change.custom = parseCustom(value);
    } catch (err) {
      if (err instanceof CloudInitFieldError) throw schemaError(err.field, err.reason);
      throw err;
    }
  }
  if (Object.keys(ipConfigs).length) change.ipConfigs = ipConfigs;
  return change;
}

/** A domain refusal of a cloud-init value as PVE's 400 naming the parameter; anything else unchanged. */
export function cloudInitError(err: unknown): unknown {
  return err instanceof CloudInitFieldError ? schemaError(err.field, err.reason) : err;
}
