/**
 * What the simulated guest knows about itself, read fresh from the store each time a command asks (so `ip addr`
 * follows an IP the guest agent reported after boot, or a migration): hostname, OS release, login user, NICs.
 */
import { guestCloudInit } from '../kubevirt/cloud-init.js';
import { guestImageOf } from '../kubevirt/guest-images.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';

export interface OsRelease {
  id: string;
  name: string;
  prettyName: string;
  versionId: string;
  kernelRelease: string;
  kernelVersion: string;
}

export interface GuestNic {
  name: string;
  mac: string;
  ips: string[];
}

export interface GuestIdentity {
  hostname: string;
  os: OsRelease;
  /** The cloud-init user of the image (`fedora`, `ubuntu`, ...); `root` for containers and unknown images. */
  defaultUser: string;
  nics: GuestNic[];
  memoryMiB: number;
  /** Wall-clock ms when the guest (or container) last booted, for `uptime`. */
  bootedAt: number;
  /** The password cloud-init set for `defaultUser` (hash or text); absent: the console takes any password. */
  password?: string;
  /** Keys cloud-init wrote to `defaultUser`'s ~/.ssh/authorized_keys. */
  sshKeys?: string[];
}

const LINUX_FALLBACK: OsRelease = {
  id: 'linux',
  name: 'Linux',
  prettyName: 'Linux',
  versionId: '',
  kernelRelease: '6.8.0',
  kernelVersion: '#1 SMP PREEMPT_DYNAMIC',
};

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Memory quantity like `4Gi`, `2048Mi`, `1G` in MiB (0 when absent or unparsable). */
export function quantityToMiB(q: unknown): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q ?? ''));
  if (!m) return 0;
  const n = Number(m[1]);
  const factor: Record<string, number> = {
    Ki: 1 / 1024,
    Mi: 1,
    Gi: 1024,
    Ti: 1024 * 1024,
    k: 1e3 / 2 ** 20,
    M: 1e6 / 2 ** 20,
    G: 1e9 / 2 ** 20,
    T: 1e12 / 2 ** 20,
  };
  return Math.round(n * (m[2] ? factor[m[2]]! : 1 / 2 ** 20));
}

export function vmiIdentity(store: ObjectStore, vmi: KObject): GuestIdentity {
  const status = record(vmi.status);
  const spec = record(vmi.spec);
  const image = guestImageOf(store, vmi);
  const agentOs = record(status.guestOSInfo);
  const os: OsRelease = str(agentOs.prettyName)
    ? {
        id: str(agentOs.id) ?? image.os.id,
        name: str(agentOs.name) ?? image.os.name,
        prettyName: str(agentOs.prettyName)!,
        versionId: str(agentOs.versionId) ?? image.os.versionId,
        kernelRelease: str(agentOs.kernelRelease) ?? image.os.kernelRelease,
        kernelVersion: str(agentOs.kernelVersion) ?? image.os.kernelVersion,
      }
    : image.os.prettyName
      ? image.os
      : LINUX_FALLBACK;
  const interfaces = (status.interfaces as unknown[] | undefined) ?? [];
  const nics = interfaces.map((raw, i) => {
    const nic = record(raw);
    const ips = ((nic.ipAddresses as unknown[] | undefined) ?? [nic.ipAddress])
      .map(str)
      .filter((x): x is string => !!x);
    return { name: str(nic.interfaceName) ?? `eth${i}`, mac: str(nic.mac) ?? fakeMac(vmi.metadata.uid, i), ips };
  });
  const domain = record(spec.domain);
  const memory =
    record(status.memory).guestCurrent ??
    record(domain.memory).guest ??
    record(record(domain.resources).requests).memory;
  // cloud-init (user-data and network-config, inline or from the Secrets the volume names) made the user.
  const ci = guestCloudInit(store, vmi);
  return {
    hostname: str(spec.hostname) ?? ci?.hostname ?? vmi.metadata.name,
    os,
    defaultUser: ci?.user ?? (image.family === 'unknown' ? 'root' : image.user),
    nics,
    memoryMiB: quantityToMiB(memory) || 2048,
    bootedAt: runningSince(vmi) ?? Date.now(),
    ...(ci?.password ? { password: ci.password } : {}),
    ...(ci?.sshKeys.length ? { sshKeys: ci.sshKeys } : {}),
  };
}

export function podIdentity(pod: KObject, node: KObject | undefined): GuestIdentity {
  const status = record(pod.status);
  const image = String(record(((record(pod.spec).containers as unknown[] | undefined) ?? [])[0]).image ?? '');
  const kernel = str(record(record(node?.status).nodeInfo).kernelVersion) ?? '6.8.0-58-generic';
  const os = containerOs(image, kernel);
  const ips = ((status.podIPs as unknown[] | undefined) ?? [])
    .map((p) => str(record(p).ip))
    .filter((x): x is string => !!x);
  const podIp = str(status.podIP);
  if (podIp && !ips.includes(podIp)) ips.unshift(podIp);
  const started = Date.parse(String(status.startTime ?? ''));
  return {
    hostname: str(record(pod.spec).hostname) ?? pod.metadata.name,
    os,
    defaultUser: 'root',
    nics: [{ name: 'eth0', mac: fakeMac(pod.metadata.uid, 0), ips }],
    memoryMiB: 3915,
    bootedAt: Number.isFinite(started) ? started : Date.now(),
  };
}

function containerOs(image: string, kernelRelease: string): OsRelease {
  const base = { kernelRelease, kernelVersion: '#1 SMP PREEMPT_DYNAMIC' };
  if (/alpine/i.test(image))
    return { ...base, id: 'alpine', name: 'Alpine Linux', prettyName: 'Alpine Linux v3.21', versionId: '3.21.3' };
  if (/ubuntu/i.test(image))
    return { ...base, id: 'ubuntu', name: 'Ubuntu', prettyName: 'Ubuntu 24.04.2 LTS', versionId: '24.04' };
  if (/fedora/i.test(image))
    return {
      ...base,
      id: 'fedora',
      name: 'Fedora Linux',
      prettyName: 'Fedora Linux 42 (Container Image)',
      versionId: '42',
    };
  return {
    ...base,
    id: 'debian',
    name: 'Debian GNU/Linux',
    prettyName: 'Debian GNU/Linux 12 (bookworm)',
    versionId: '12',
  };
}

/** When the VMI last entered Running (its phaseTransitionTimestamps), or undefined. */
export function runningSince(vmi: KObject): number | undefined {
  const transitions = (record(vmi.status).phaseTransitionTimestamps as unknown[] | undefined) ?? [];
  for (let i = transitions.length - 1; i >= 0; i--) {
    const t = record(transitions[i]);
    if (t.phase === 'Running') {
      const ms = Date.parse(String(t.phaseTransitionTimestamp ?? ''));
      if (Number.isFinite(ms)) return ms;
    }
  }
  return undefined;
}

/** A stable locally administered MAC (52:54:00 is QEMU's prefix) derived from the object's uid. */
function fakeMac(uid: string, index: number): string {
  const hex = uid.replace(/[^0-9a-f]/gi, '').padEnd(6, '0');
  const bytes = [
    hex.slice(0, 2),
    hex.slice(2, 4),
    ((Number.parseInt(hex.slice(4, 6), 16) + index) & 0xff).toString(16).padStart(2, '0'),
  ];
  return `52:54:00:${bytes.join(':')}`;
}
