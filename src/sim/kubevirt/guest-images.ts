/**
 * What runs inside a simulated guest. The guest agent (and so guestosinfo/userlist/filesystemlist, agent IPs)
 * exists only for images that ship qemu-guest-agent: the Fedora/Ubuntu/Debian/CentOS Stream containerdisks and
 * cloud images do, CirrOS and unknown images do not — exactly what a user sees on a real cluster.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { K } from './keys.js';
import { digArray, digRecord, digString } from './objects.js';

export interface GuestOs {
  id: string;
  name: string;
  prettyName: string;
  version: string;
  versionId: string;
  kernelRelease: string;
  kernelVersion: string;
  machine: 'x86_64';
}

export interface GuestImage {
  /** Key of the catalog entry, e.g. `fedora`. */
  family: string;
  hasAgent: boolean;
  os: GuestOs;
  user: string;
  /** Root filesystem as the agent reports it. */
  rootFs: { diskName: string; fileSystemType: string; usedBytes: number };
}

const GiB = 2 ** 30;

const CATALOG: { match: RegExp; image: GuestImage }[] = [
  {
    match: /fedora/i,
    image: {
      family: 'fedora',
      hasAgent: true,
      user: 'fedora',
      rootFs: { diskName: 'vda4', fileSystemType: 'btrfs', usedBytes: 2.1 * GiB },
      os: {
        id: 'fedora',
        name: 'Fedora Linux',
        prettyName: 'Fedora Linux 42 (Cloud Edition)',
        version: '42 (Cloud Edition)',
        versionId: '42',
        kernelRelease: '6.14.0-63.fc42.x86_64',
        kernelVersion: '#1 SMP PREEMPT_DYNAMIC Mon Mar 24 19:53:37 UTC 2025',
        machine: 'x86_64',
      },
    },
  },
  {
    match: /ubuntu/i,
    image: {
      family: 'ubuntu',
      hasAgent: true,
      user: 'ubuntu',
      rootFs: { diskName: 'vda1', fileSystemType: 'ext4', usedBytes: 1.8 * GiB },
      os: {
        id: 'ubuntu',
        name: 'Ubuntu',
        prettyName: 'Ubuntu 24.04.2 LTS',
        version: '24.04.2 LTS (Noble Numbat)',
        versionId: '24.04',
        kernelRelease: '6.8.0-58-generic',
        kernelVersion: '#60-Ubuntu SMP PREEMPT_DYNAMIC Fri Mar 14 18:29:48 UTC 2025',
        machine: 'x86_64',
      },
    },
  },
  {
    match: /debian/i,
    image: {
      family: 'debian',
      hasAgent: true,
      user: 'debian',
      rootFs: { diskName: 'vda1', fileSystemType: 'ext4', usedBytes: 1.2 * GiB },
      os: {
        id: 'debian',
        name: 'Debian GNU/Linux',
        prettyName: 'Debian GNU/Linux 12 (bookworm)',
        version: '12 (bookworm)',
        versionId: '12',
        kernelRelease: '6.1.0-32-cloud-amd64',
        kernelVersion: '#1 SMP PREEMPT_DYNAMIC Debian 6.1.129-1 (2025-03-06)',
        machine: 'x86_64',
      },
    },
  },
  {
    match: /centos/i,
    image: {
      family: 'centos-stream',
      hasAgent: true,
      user: 'cloud-user',
      rootFs: { diskName: 'vda4', fileSystemType: 'xfs', usedBytes: 1.6 * GiB },
      os: {
        id: 'centos',
        name: 'CentOS Stream',
        prettyName: 'CentOS Stream 9',
        version: '9',
        versionId: '9',
        kernelRelease: '5.14.0-570.el9.x86_64',
        kernelVersion: '#1 SMP PREEMPT_DYNAMIC Tue Apr 8 15:20:56 UTC 2025',
        machine: 'x86_64',
      },
    },
  },
  {
    match: /cirros/i,
    image: {
      family: 'cirros',
      hasAgent: false,
      user: 'cirros',
      rootFs: { diskName: 'vda1', fileSystemType: 'ext3', usedBytes: 0.02 * GiB },
      os: {
        id: 'cirros',
        name: 'CirrOS',
        prettyName: 'CirrOS 0.6.2',
        version: '0.6.2',
        versionId: '0.6.2',
        kernelRelease: '5.15.0-71-generic',
        kernelVersion: '#78-Ubuntu SMP',
        machine: 'x86_64',
      },
    },
  },
];

const UNKNOWN: GuestImage = {
  family: 'unknown',
  hasAgent: false,
  user: 'root',
  rootFs: { diskName: 'vda1', fileSystemType: 'ext4', usedBytes: 1 * GiB },
  os: {
    id: '',
    name: '',
    prettyName: '',
    version: '',
    versionId: '',
    kernelRelease: '',
    kernelVersion: '',
    machine: 'x86_64',
  },
};

export function guestImageFromText(text: string): GuestImage | undefined {
  return CATALOG.find((entry) => entry.match.test(text))?.image;
}

/**
 * Where a VMI's boot disk came from: a containerDisk image, the DataVolume's import source, or failing that the
 * preference name of the VM. Hints are checked in boot order so an attached ISO does not win over the root disk.
 */
export function guestImageOf(store: ObjectStore, vmi: KObject, preferenceName?: string): GuestImage {
  const namespace = vmi.metadata.namespace;
  const hints: string[] = [];
  for (const volume of digArray(vmi, 'spec', 'volumes')) {
    const containerDisk = digString(volume, 'containerDisk', 'image');
    if (containerDisk) hints.push(containerDisk);
    const dvName = digString(volume, 'dataVolume', 'name');
    if (dvName) {
      const dv = store.get(K.dataVolumes, namespace, dvName);
      const source = digRecord(dv, 'spec', 'source');
      const url = digString(source, 'registry', 'url') ?? digString(source, 'http', 'url');
      if (url) hints.push(url);
    }
  }
  if (preferenceName) hints.push(preferenceName);
  hints.push(vmi.metadata.annotations?.['corral.dev/os'] ?? '');
  for (const hint of hints) {
    const found = guestImageFromText(hint);
    if (found) return found;
  }
  return UNKNOWN;
}
