/**
 * What a simulated guest's cloud-init makes of the VMI's cloudInitNoCloud / cloudInitConfigDrive volume, the way
 * KubeVirt hands it over: user-data inline, base64 or from a Secret (`secretRef`, keys `userdata`/`userData`), and
 * network data likewise (`networkDataSecretRef`, keys `networkdata`/`networkData`). The guest then has the user,
 * its password (a crypt hash or plain text), the authorized keys and the static addresses of its interfaces.
 */
import { parse as parseYaml } from 'yaml';
import { sha512CryptDigest } from '../../lib/sha-crypt.js';
import type { ObjectStore } from '../store/object-store.js';
import { resourceKey, type KObject } from '../store/types.js';

const SECRETS = resourceKey('', 'secrets');

export interface GuestCloudInit {
  user?: string;
  /** `$6$…` (or another crypt hash) or plain text, as `password:` gave it. */
  password?: string;
  sshKeys: string[];
  hostname?: string;
  /** Static addresses (no prefix) by interface name (`eth0`). */
  addresses: Record<string, string[]>;
}

type Dict = Record<string, unknown>;
const dict = (v: unknown): Dict => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function secretKey(store: ObjectStore, namespace: string, ref: unknown, keys: string[]): string | undefined {
  const name = text(dict(ref).name);
  if (!name) return undefined;
  const data = dict(store.get(SECRETS, namespace, name)?.data);
  for (const k of keys) {
    const v = text(data[k]);
    if (v) return Buffer.from(v, 'base64').toString('utf8');
  }
  return undefined;
}

function part(store: ObjectStore, namespace: string, source: Dict, kind: 'user' | 'network'): string | undefined {
  const inline = text(source[`${kind}Data`]);
  if (inline) return inline;
  const b64 = text(source[`${kind}DataBase64`]);
  if (b64) return Buffer.from(b64, 'base64').toString('utf8');
  const ref = kind === 'user' ? (source.secretRef ?? source.userDataSecretRef) : source.networkDataSecretRef;
  return secretKey(store, namespace, ref, [`${kind}data`, `${kind}Data`]);
}

function parse(textValue: string | undefined): unknown {
  if (!textValue) return undefined;
  try {
    return parseYaml(textValue) as unknown;
  } catch {
    return undefined;
  }
}

/** Addresses from network-config v1, v2 or OpenStack's network_data.json (config drive). */
function addressesOf(network: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const add = (iface: string, cidr: unknown) => {
    const a = text(cidr)?.replace(/\/\d+$/, '');
    if (a) (out[iface] ??= []).push(a);
  };
  const n = dict(network);
  if (Array.isArray(n.config))
    for (const raw of n.config) {
      const c = dict(raw);
      if (c.type !== 'physical') continue;
      for (const s of list(c.subnets).map(dict))
        if (s.type === 'static' || s.type === 'static6') add(String(c.name ?? ''), s.address);
    }
  for (const [iface, raw] of Object.entries(dict(n.ethernets)))
    for (const a of list(dict(raw).addresses)) add(iface, a);
  if (Array.isArray(n.networks))
    for (const raw of n.networks) {
      const net = dict(raw);
      if (net.type === 'ipv4' || net.type === 'ipv6') add(String(net.link ?? ''), net.ip_address);
    }
  return out;
}

export function guestCloudInit(store: ObjectStore, vmi: KObject): GuestCloudInit | undefined {
  const namespace = vmi.metadata.namespace ?? '';
  for (const v of list(dict(vmi.spec).volumes)) {
    const source = dict(dict(v).cloudInitNoCloud ?? dict(v).cloudInitConfigDrive);
    if (!Object.keys(source).length) continue;
    const user = dict(parse(part(store, namespace, source, 'user')));
    const firstUser = dict(list(user.users).find((u) => typeof u === 'object'));
    const keys = [...list(user.ssh_authorized_keys), ...list(firstUser.ssh_authorized_keys)]
      .map(text)
      .filter((k): k is string => !!k);
    const chpasswdUser = /^root:(.*)$/m.exec(String(dict(user.chpasswd).list ?? ''));
    const password =
      text(user.password) ?? text(firstUser.passwd) ?? text(firstUser.plain_text_passwd) ?? chpasswdUser?.[1];
    const name =
      text(user.user) ??
      (typeof user.user === 'object' ? text(dict(user.user).name) : undefined) ??
      text(firstUser.name);
    return {
      ...(name && /^[a-z_][a-z0-9_-]*$/.test(name) ? { user: name } : {}),
      ...(password ? { password } : {}),
      sshKeys: keys,
      ...(text(user.hostname) ? { hostname: text(user.hostname) } : {}),
      addresses: addressesOf(parse(part(store, namespace, source, 'network'))),
    };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// The guest's crypt(3) for `$6$` hashes: what its login program checks a typed password against.

/** Whether `typed` matches the configured password: a `$6$` hash is checked as crypt(3) does, else compared as text. */
export function passwordMatches(configured: string, typed: string): boolean {
  const m = /^\$6\$(?:rounds=(\d+)\$)?([^$]{0,16})\$([./0-9A-Za-z]{86})$/.exec(configured);
  if (m) return sha512CryptDigest(typed, m[2]!, m[1] ? Number(m[1]) : 5000) === m[3];
  if (configured.startsWith('$')) return false; // another hash scheme this guest does not implement
  return configured === typed;
}
