/**
 * Containers (Corral CTs: a pod plus its data PVC) in PVE's `lxc` vocabulary: the template names Proxmox tools send
 * as `ostemplate`, the rows of `/nodes/{n}/lxc` and `/cluster/resources`, `status/current` and the config.
 * Pure functions over what the endpoints resolved; nothing here reads the cluster.
 */
import type { KObject } from '@/server/domain/cluster-port';
import type { CtState } from '@/server/domain/ct-rows';
import { ctTags, ANNOTATION_CT_DESCRIPTION, type CtSpec } from '@/server/domain/ct-spec';
import type { CtUsage } from '@/server/domain/ct-runtime';
import { ImageReference } from '@/server/schemas/cts';
import { stableMac } from './translate/net-spec';
import { bytesToMiB, formatPveSize, parseQuantity } from './translate/size';
import { configDigest } from './vm-view';

/** The templates the `local` storage lists as `vztmpl` content (PVE's appliance names) and the images they start. */
export const CT_TEMPLATES: readonly { volid: string; image: string }[] = [
  { volid: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst', image: 'docker.io/library/debian:12' },
  { volid: 'local:vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst', image: 'docker.io/library/ubuntu:24.04' },
  { volid: 'local:vztmpl/alpine-3.20-default_20240908_amd64.tar.xz', image: 'docker.io/library/alpine:3.20' },
  { volid: 'local:vztmpl/fedora-42-default_20250428_amd64.tar.xz', image: 'registry.fedoraproject.org/fedora:42' },
  { volid: 'local:vztmpl/archlinux-base_20240911-1_amd64.tar.zst', image: 'docker.io/library/archlinux:latest' },
];

/** Distribution names in PVE template file names → the repository of their official container image. */
const REPOSITORY: Record<string, string> = {
  debian: 'docker.io/library/debian',
  ubuntu: 'docker.io/library/ubuntu',
  alpine: 'docker.io/library/alpine',
  fedora: 'registry.fedoraproject.org/fedora',
  archlinux: 'docker.io/library/archlinux',
  almalinux: 'docker.io/library/almalinux',
  rockylinux: 'quay.io/rockylinux/rockylinux',
  centos: 'quay.io/centos/centos',
  opensuse: 'registry.opensuse.org/opensuse/leap',
  oraclelinux: 'docker.io/library/oraclelinux',
};

export class TemplateError extends Error {}

/**
 * The container image an `ostemplate` starts: a PVE template (`local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst`,
 * any storage prefix) maps to its distribution's official image at that version (`docker.io/library/debian:12`); an
 * OCI image reference (`docker.io/library/debian:bookworm`, `ghcr.io/me/tools:1`) is taken as it is.
 */
export function imageOfTemplate(ostemplate: string): string {
  const listed = CT_TEMPLATES.find((t) => t.volid === ostemplate);
  if (listed) return listed.image;
  const file = /^[A-Za-z0-9][\w.-]*:vztmpl\/([^/]+)$/.exec(ostemplate)?.[1];
  if (file === undefined) {
    if (ImageReference.safeParse(ostemplate).success) return ostemplate;
    throw new TemplateError(
      `'${ostemplate}' is neither a template volume (<storage>:vztmpl/<file>) nor a container image reference`,
    );
  }
  const m = /^([a-z]+)-(?:(\d+(?:\.\d+)?)-)?([a-z0-9-]*?)_/.exec(file);
  const repository = m ? REPOSITORY[m[1] ?? ''] : undefined;
  if (!m || !repository)
    throw new TemplateError(
      `template '${file}' names no distribution Corral knows (${Object.keys(REPOSITORY).join(', ')}); give a container image reference instead`,
    );
  const [, os, version] = m;
  if (os === 'centos') return `${repository}:stream${version ?? '9'}`;
  return `${repository}:${version ?? 'latest'}`;
}

/** PVE's `ostype` for an image: its distribution, `unmanaged` when the image says none. */
export function ostypeOf(image: string): string {
  const repo = image.split('@')[0]?.replace(/:[\w.-]+$/, '') ?? '';
  const name = repo.split('/').pop() ?? '';
  if (/^(rockylinux|almalinux|centos|oraclelinux)$/.test(name)) return 'centos';
  if (/^(leap|tumbleweed|opensuse)/.test(name) || repo.includes('opensuse')) return 'opensuse';
  return ['debian', 'devuan', 'ubuntu', 'fedora', 'archlinux', 'alpine', 'gentoo', 'nixos'].includes(name)
    ? name
    : 'unmanaged';
}

/** What a row, a status and a config are built from. */
export interface CtContext {
  vmid: number;
  ct: CtState;
  /** The PVE node shown for it (where the pod runs, else the home node). */
  node: string;
  lock?: string;
  usage?: CtUsage;
  /** Epoch ms since the pod runs, 0 when it does not. */
  since: number;
  /** Bytes used on the data volume (the kubelet's reading), 0 when unknown. */
  diskUsed: number;
  now: number;
}

/** PVE's `status` of a CT: `running` while its pod runs or is being stopped, else `stopped`. */
export function ctStatus(ct: CtState): 'running' | 'stopped' {
  if (!ct.pod) return 'stopped';
  if (ct.pod.metadata.deletionTimestamp) return 'running'; // PVE shows a CT being shut down as running
  return ct.pod.status?.phase === 'Running' ? 'running' : 'stopped';
}

function numbers(c: CtContext) {
  const { spec, pvc } = c.ct;
  const capacity = (pvc.status?.capacity as Record<string, unknown> | undefined)?.storage;
  const maxmem = parseQuantity(spec.mem) ?? 0;
  const status = ctStatus(c.ct);
  return {
    status,
    cpus: spec.cpu,
    maxmem,
    mem: Math.min(maxmem || Infinity, Math.round(c.usage?.memoryBytes ?? 0)),
    cpu: c.usage?.cpuFraction ?? 0,
    maxdisk: parseQuantity(typeof capacity === 'string' ? capacity : spec.disk) ?? 0,
    disk: Math.round(c.diskUsed),
    uptime: status === 'running' && c.since > 0 ? Math.max(0, Math.floor((c.now - c.since) / 1000)) : 0,
  };
}

function withTagsAndLock(out: Record<string, unknown>, c: CtContext): Record<string, unknown> {
  const tags = ctTags(c.ct.pvc);
  if (tags.length) out.tags = tags.join(';');
  if (c.lock) out.lock = c.lock;
  return out;
}

/** A row of `GET /nodes/{node}/lxc`. */
export function lxcListRow(c: CtContext): Record<string, unknown> {
  const n = numbers(c);
  return withTagsAndLock(
    {
      vmid: c.vmid,
      name: c.ct.spec.name,
      type: 'lxc',
      status: n.status,
      cpus: n.cpus,
      maxmem: n.maxmem,
      mem: n.mem,
      maxswap: 0,
      swap: 0,
      maxdisk: n.maxdisk,
      disk: n.disk,
      uptime: n.uptime,
      cpu: n.cpu,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
    },
    c,
  );
}

/** `GET …/lxc/{vmid}/status/current`: the list row plus the single-CT fields. */
export function lxcStatusCurrent(c: CtContext): Record<string, unknown> {
  return { ...lxcListRow(c), ha: { managed: 0 } };
}

/** A `type: lxc` row of `/cluster/resources`. */
export function lxcResourceRow(c: CtContext): Record<string, unknown> {
  const n = numbers(c);
  return withTagsAndLock(
    {
      id: `lxc/${c.vmid}`,
      type: 'lxc',
      vmid: c.vmid,
      node: c.node,
      name: c.ct.spec.name,
      status: n.status,
      template: 0,
      maxcpu: n.cpus,
      cpu: n.cpu,
      maxmem: n.maxmem,
      mem: n.mem,
      maxdisk: n.maxdisk,
      disk: n.disk,
      uptime: n.uptime,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
    },
    c,
  );
}

/** What the config shows beside the CT itself. */
export interface CtConfigFacts {
  /** The PVE storage id of the data volume (its StorageClass, or the default storage for the cluster default). */
  storage: string;
  /** PVE's `arch` (`amd64`, `arm64`) of the node it runs on, or of the cluster's first node. */
  arch: string;
}

/** The data volume as a PVE volume string: `<storage>:<pvc>,size=<n>`. */
export function volumeString(c: CtContext, facts: CtConfigFacts): string {
  return `${facts.storage}:${c.ct.pvc.metadata.name ?? ''},size=${formatPveSize(numbers(c).maxdisk)}`;
}

/**
 * `GET …/lxc/{vmid}/config`. A privileged CT's volume holds its root filesystem (it chroots into it): `rootfs`. An
 * unprivileged CT's root is the image's own, thrown away on Stop; only `/data` (the volume) persists: `mp0` with
 * `mp=/data`, and no `rootfs` (claiming one would promise a persistent root it does not have).
 */
export function lxcConfig(c: CtContext, facts: CtConfigFacts): Record<string, unknown> {
  const { spec, pvc } = c.ct;
  const config: Record<string, unknown> = {
    arch: facts.arch,
    cores: spec.cpu,
    hostname: spec.name,
    memory: bytesToMiB(parseQuantity(spec.mem) ?? 0),
    swap: 0,
    net0: `name=eth0,bridge=vmbr0,hwaddr=${stableMac(spec.namespace, spec.name, 0)},ip=dhcp,type=veth`,
    ostype: ostypeOf(spec.image),
    unprivileged: spec.privileged ? 0 : 1,
  };
  if (spec.privileged) config.rootfs = volumeString(c, facts);
  else config.mp0 = `${volumeString(c, facts).replace(/,size=/, ',mp=/data,size=')}`;
  const tags = ctTags(pvc);
  if (tags.length) config.tags = tags.join(';');
  const description = pvc.metadata.annotations?.[ANNOTATION_CT_DESCRIPTION];
  if (description) config.description = description;
  if (c.lock) config.lock = c.lock;
  config.digest = configDigest(config);
  return config;
}

/**
 * `GET …/lxc/{vmid}/interfaces`: `lo` and `eth0` (the config's MAC) with the pod's addresses. Kubernetes gives a pod
 * its addresses, not their prefix lengths, so each is a host address (`/32`, `/128`).
 */
export function lxcInterfaces(spec: CtSpec, pod: KObject): Record<string, string>[] {
  const ips = Array.isArray(pod.status?.podIPs)
    ? (pod.status.podIPs as { ip?: unknown }[]).map((p) => String(p.ip ?? '')).filter(Boolean)
    : typeof pod.status?.podIP === 'string' && pod.status.podIP
      ? [pod.status.podIP]
      : [];
  const v4 = ips.find((ip) => !ip.includes(':'));
  const v6 = ips.find((ip) => ip.includes(':'));
  return [
    { name: 'lo', hwaddr: '00:00:00:00:00:00', inet: '127.0.0.1/8', inet6: '::1/128' },
    {
      name: 'eth0',
      hwaddr: stableMac(spec.namespace, spec.name, 0).toLowerCase(),
      ...(v4 ? { inet: `${v4}/32` } : {}),
      ...(v6 ? { inet6: `${v6}/128` } : {}),
    },
  ];
}
