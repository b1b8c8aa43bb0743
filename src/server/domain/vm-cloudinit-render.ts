/**
 * A VM's cloud-init settings (the `ciuser`/`sshkeys`/`ipconfigN`/… of Proxmox, the Cloud-Init panel of the UI) and
 * what they render to: the user-data and network-config the guest reads, in the words Proxmox VE generates them
 * (PVE::QemuServer::Cloudinit), so a playbook's guest boots the same on Corral as on a PVE node. Pure: validation
 * and rendering only; vm-cloudinit.ts stores and attaches.
 */
import { createHash } from 'node:crypto';
import { CorralError } from '../errors';

export interface IpConfig {
  /** `dhcp` or an IPv4 CIDR (`10.0.0.5/24`). */
  ip?: string;
  gw?: string;
  /** `dhcp`, `auto` (SLAAC) or an IPv6 CIDR. */
  ip6?: string;
  gw6?: string;
}

export type CloudInitType = 'nocloud' | 'configdrive2';

/** Snippet references (`<storage>:snippets/<file>`) replacing a generated part, PVE's `cicustom`. */
export interface CloudInitCustom {
  user?: string;
  network?: string;
  meta?: string;
  vendor?: string;
}

/** Everything but the password (which lives only in the Secret, hashed). */
export interface CloudInitSettings {
  user?: string;
  sshKeys: string[];
  /** By NIC index (`0` ↔ `net0`/the first interface). */
  ipConfigs: Record<string, IpConfig>;
  nameservers: string[];
  searchDomains: string[];
  /** Unset: PVE's default, configdrive2 for Windows guests, nocloud otherwise. */
  type?: CloudInitType;
  /** `package_upgrade` in user-data; PVE's default is on. */
  upgrade?: boolean;
  custom: CloudInitCustom;
}

export function emptySettings(): CloudInitSettings {
  return { sshKeys: [], ipConfigs: {}, nameservers: [], searchDomains: [], custom: {} };
}

/** A refusal that names the field (`ipconfig0`, `ciuser`, …) so every transport can say which input was bad. */
export class CloudInitFieldError extends CorralError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super('BAD_REQUEST', `${field}: ${reason}`);
  }
}

const USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const SNIPPET = /^[a-z][a-z0-9._-]*:snippets\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

function isIpv6(text: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(':')) return false;
  const parts = text.split('::');
  if (parts.length > 2) return false;
  const groups = parts.flatMap((p) => (p ? p.split(':') : []));
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return parts.length === 2 ? groups.length < 8 : groups.length === 8;
}

export function isIp(text: string): boolean {
  return IPV4.test(text) || isIpv6(text);
}

function cidr4(text: string): { addr: string; prefix: number } | undefined {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(text);
  if (!m || !IPV4.test(m[1]!) || Number(m[2]) > 32) return undefined;
  return { addr: m[1]!, prefix: Number(m[2]) };
}

function cidr6(text: string): { addr: string; prefix: number } | undefined {
  const m = /^([0-9a-fA-F:]+)\/(\d{1,3})$/.exec(text);
  if (!m || !isIpv6(m[1]!) || Number(m[2]) > 128) return undefined;
  return { addr: m[1]!, prefix: Number(m[2]) };
}

export function netmask(prefix: number): string {
  const bits = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((s) => (bits >>> s) & 0xff).join('.');
}

/** Refuses what PVE's schema refuses, naming `field`. */
export function validateIpConfig(field: string, c: IpConfig): IpConfig {
  const bad = (why: string) => new CloudInitFieldError(field, why);
  if (c.ip !== undefined && c.ip !== 'dhcp' && !cidr4(c.ip))
    throw bad(`invalid format - ip: '${c.ip}' is neither 'dhcp' nor an IPv4 address in CIDR form (10.0.0.5/24)`);
  if (c.gw !== undefined) {
    if (!IPV4.test(c.gw)) throw bad(`invalid format - gw: '${c.gw}' is not a valid IPv4 address`);
    if (!c.ip || c.ip === 'dhcp') throw bad('gateway specified without specifying an IP address');
  }
  if (c.ip6 !== undefined && c.ip6 !== 'dhcp' && c.ip6 !== 'auto' && !cidr6(c.ip6))
    throw bad(`invalid format - ip6: '${c.ip6}' is neither 'dhcp', 'auto' nor an IPv6 address in CIDR form`);
  if (c.gw6 !== undefined) {
    if (!isIpv6(c.gw6)) throw bad(`invalid format - gw6: '${c.gw6}' is not a valid IPv6 address`);
    if (!c.ip6 || c.ip6 === 'dhcp' || c.ip6 === 'auto')
      throw bad('gateway specified without specifying an IPv6 address');
  }
  return c;
}

/** Checks every field; returns the settings unchanged so callers can chain. */
export function validateSettings(s: CloudInitSettings): CloudInitSettings {
  if (s.user !== undefined && !USER.test(s.user))
    throw new CloudInitFieldError('ciuser', `invalid user name '${s.user}' (lower-case letters, digits, '_' and '-')`);
  for (const k of s.sshKeys)
    if (
      !/^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/=]+( .*)?$/.test(
        k,
      )
    )
      throw new CloudInitFieldError('sshkeys', `invalid public key '${k.slice(0, 40)}${k.length > 40 ? '…' : ''}'`);
  for (const [i, c] of Object.entries(s.ipConfigs)) {
    if (!/^\d+$/.test(i) || Number(i) > 31) throw new CloudInitFieldError(`ipconfig${i}`, 'NIC index must be 0–31');
    validateIpConfig(`ipconfig${i}`, c);
  }
  for (const n of s.nameservers)
    if (!isIp(n)) throw new CloudInitFieldError('nameserver', `'${n}' is not a valid IP address`);
  for (const d of s.searchDomains)
    if (!HOSTNAME.test(d)) throw new CloudInitFieldError('searchdomain', `'${d}' is not a valid DNS name`);
  for (const [part, ref] of Object.entries(s.custom))
    if (ref !== undefined && !SNIPPET.test(ref))
      throw new CloudInitFieldError(
        'cicustom',
        `${part}: '${ref}' is not a snippet volume (<storage>:snippets/<file>)`,
      );
  if (s.custom.meta !== undefined)
    throw new CloudInitFieldError(
      'cicustom',
      'meta: KubeVirt writes the meta-data itself (instance id and hostname); only user and network apply',
    );
  if (s.custom.vendor !== undefined)
    throw new CloudInitFieldError('cicustom', 'vendor: KubeVirt has no vendor-data; only user and network apply');
  return s;
}

/** What the generated image is made of: the settings plus the facts of the VM it is rendered for. */
export interface RenderInput {
  settings: CloudInitSettings;
  /** Hashed (`$6$…`), or undefined when no password is set. */
  passwordHash?: string;
  /** The VM's name: the hostname, as PVE uses the VM name. */
  hostname: string;
  /** MAC of each NIC by index, lower-case. */
  macs: string[];
  /** Content of the snippets `custom` names, already read. */
  snippets: { user?: string; network?: string };
}

export function resolvedType(s: CloudInitSettings, ostype: string | undefined): CloudInitType {
  return s.type ?? (/^(win|w2k)/.test(ostype ?? '') ? 'configdrive2' : 'nocloud');
}

function hostnameAndFqdn(name: string, search: string[]): { hostname: string; fqdn: string } {
  if (name.includes('.')) return { hostname: name.replace(/\..*$/, ''), fqdn: name };
  return { hostname: name, fqdn: search[0] ? `${name}.${search[0]}` : name };
}

/** PVE's cloudinit_userdata, line for line. */
export function renderUserData(input: RenderInput): string {
  if (input.snippets.user !== undefined) return input.snippets.user;
  const s = input.settings;
  const { hostname, fqdn } = hostnameAndFqdn(input.hostname, s.searchDomains);
  let out = '#cloud-config\n';
  out += `hostname: ${hostname}\n`;
  out += 'manage_etc_hosts: true\n';
  out += `fqdn: ${fqdn}\n`;
  if (s.user !== undefined) out += `user: ${s.user}\n`;
  if (s.user === 'root') out += 'disable_root: False\n';
  if (input.passwordHash !== undefined) out += `password: ${input.passwordHash}\n`;
  if (s.sshKeys.length) {
    out += 'ssh_authorized_keys:\n';
    for (const k of s.sshKeys) out += `  - ${k}\n`;
  }
  out += 'chpasswd:\n  expire: False\n';
  if (s.user !== 'root') out += 'users:\n  - default\n';
  if (s.upgrade !== false) out += 'package_upgrade: true\n';
  return out;
}

function indices(s: CloudInitSettings, macs: string[]): number[] {
  return Object.keys(s.ipConfigs)
    .map(Number)
    .filter((i) => i < macs.length)
    .sort((a, b) => a - b);
}

/** PVE's nocloud_network: network-config version 1. */
export function renderNetworkV1(input: RenderInput): string {
  if (input.snippets.network !== undefined) return input.snippets.network;
  const s = input.settings;
  let out = 'version: 1\nconfig:\n';
  for (const id of indices(s, input.macs)) {
    const c = s.ipConfigs[String(id)]!;
    out += `    - type: physical\n      name: eth${id}\n      mac_address: '${input.macs[id]}'\n      subnets:\n`;
    const i = '      ';
    if (c.ip === 'dhcp') out += `${i}- type: dhcp4\n`;
    else if (c.ip) {
      const { addr, prefix } = cidr4(c.ip)!;
      out += `${i}- type: static\n${i}  address: '${addr}'\n${i}  netmask: '${netmask(prefix)}'\n`;
      if (c.gw) out += `${i}  gateway: '${c.gw}'\n`;
    }
    if (c.ip6 === 'dhcp') out += `${i}- type: dhcp6\n`;
    else if (c.ip6 === 'auto') out += `${i}- type: ipv6_slaac\n`;
    else if (c.ip6) {
      out += `${i}- type: static6\n${i}  address: '${c.ip6}'\n`;
      if (c.gw6) out += `${i}  gateway: '${c.gw6}'\n`;
    }
  }
  if (s.nameservers.length || s.searchDomains.length) {
    out += '    - type: nameserver\n';
    if (s.nameservers.length) out += `      address:\n${s.nameservers.map((n) => `      - '${n}'\n`).join('')}`;
    if (s.searchDomains.length) out += `      search:\n${s.searchDomains.map((n) => `      - '${n}'\n`).join('')}`;
  }
  return out;
}

/**
 * The config-drive network data. KubeVirt puts `networkData` at openstack/latest/network_data.json, which is what
 * cloud-init's ConfigDrive source reads, so Corral renders the same facts PVE writes as /etc/network/interfaces in
 * OpenStack's JSON instead.
 */
export function renderNetworkConfigDrive(input: RenderInput): string {
  if (input.snippets.network !== undefined) return input.snippets.network;
  const s = input.settings;
  const links: unknown[] = [];
  const networks: unknown[] = [];
  for (const id of indices(s, input.macs)) {
    const c = s.ipConfigs[String(id)]!;
    links.push({ id: `eth${id}`, type: 'phy', ethernet_mac_address: input.macs[id] });
    if (c.ip === 'dhcp') networks.push({ id: `network${networks.length}`, link: `eth${id}`, type: 'ipv4_dhcp' });
    else if (c.ip) {
      const { addr, prefix } = cidr4(c.ip)!;
      networks.push({
        id: `network${networks.length}`,
        link: `eth${id}`,
        type: 'ipv4',
        ip_address: addr,
        netmask: netmask(prefix),
        ...(c.gw ? { routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: c.gw }] } : {}),
      });
    }
    if (c.ip6 === 'dhcp' || c.ip6 === 'auto')
      networks.push({
        id: `network${networks.length}`,
        link: `eth${id}`,
        type: c.ip6 === 'dhcp' ? 'ipv6_dhcp' : 'ipv6_slaac',
      });
    else if (c.ip6) {
      const { addr, prefix } = cidr6(c.ip6)!;
      networks.push({
        id: `network${networks.length}`,
        link: `eth${id}`,
        type: 'ipv6',
        ip_address: addr,
        netmask: String(prefix),
        ...(c.gw6 ? { routes: [{ network: '::', netmask: '::', gateway: c.gw6 }] } : {}),
      });
    }
  }
  const services = s.nameservers.map((address) => ({ type: 'dns', address }));
  return `${JSON.stringify({ links, networks, services }, null, 2)}\n`;
}

export interface RenderedImage {
  type: CloudInitType;
  userData: string;
  networkData: string;
  /** The meta-data KubeVirt writes next to them (instance id from the content, hostname). */
  metaData: string;
}

export function renderImage(input: RenderInput, type: CloudInitType): RenderedImage {
  const userData = renderUserData(input);
  const networkData = type === 'configdrive2' ? renderNetworkConfigDrive(input) : renderNetworkV1(input);
  // PVE's instance id is a digest of the generated content, so the guest re-runs cloud-init when it changes.
  const instanceId = createHash('sha1')
    .update(userData + networkData)
    .digest('hex');
  const { hostname } = hostnameAndFqdn(input.hostname, input.settings.searchDomains);
  const metaData =
    type === 'configdrive2'
      ? `${JSON.stringify({ uuid: instanceId, hostname }, null, 1)}\n`
      : `instance-id: ${instanceId}\nlocal-hostname: ${hostname}\n`;
  return { type, userData, networkData, metaData };
}

/** The settings as a canonical JSON text (sorted keys), for "has this changed since the image was made". */
export function canonical(s: CloudInitSettings): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>)
              .filter(([, x]) => x !== undefined)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return JSON.stringify(sort(s));
}

/** Tolerant parse of a stored settings annotation: a hand-edited one degrades to "nothing set". */
export function parseSettings(text: string | undefined): CloudInitSettings | undefined {
  if (!text) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const out = emptySettings();
  if (typeof r.user === 'string') out.user = r.user;
  out.sshKeys = strs(r.sshKeys);
  out.nameservers = strs(r.nameservers);
  out.searchDomains = strs(r.searchDomains);
  if (r.type === 'nocloud' || r.type === 'configdrive2') out.type = r.type;
  if (typeof r.upgrade === 'boolean') out.upgrade = r.upgrade;
  if (r.ipConfigs && typeof r.ipConfigs === 'object')
    for (const [k, v] of Object.entries(r.ipConfigs as Record<string, unknown>)) {
      if (!v || typeof v !== 'object') continue;
      const c: IpConfig = {};
      for (const f of ['ip', 'gw', 'ip6', 'gw6'] as const) {
        const x = (v as Record<string, unknown>)[f];
        if (typeof x === 'string') c[f] = x;
      }
      out.ipConfigs[k] = c;
    }
  if (r.custom && typeof r.custom === 'object')
    for (const f of ['user', 'network', 'meta', 'vendor'] as const) {
      const x = (r.custom as Record<string, unknown>)[f];
      if (typeof x === 'string') out.custom[f] = x;
    }
  return out;
}
