/**
 * The image catalog: curated containerdisks that boot as they are (quay.io/containerdisks is the KubeVirt
 * project's own set), plus the user's custom sources from ConfigMap `corral-sources` (key `sources.json`).
 */
import type { CatalogImage } from '../schemas/images';
import type { ClusterPort } from './cluster-port';
import { readSources } from './sources';

export const CURATED_IMAGES: readonly CatalogImage[] = [
  {
    name: 'fedora',
    description: 'Fedora 42 Cloud',
    containerDisk: 'quay.io/containerdisks/fedora:42',
    defaultUser: 'fedora',
    category: 'server',
    logo: 'fedora',
  },
  {
    name: 'ubuntu',
    description: 'Ubuntu 24.04 LTS (Noble) cloud image',
    containerDisk: 'quay.io/containerdisks/ubuntu:24.04',
    defaultUser: 'ubuntu',
    category: 'server',
    logo: 'ubuntu',
  },
  {
    name: 'ubuntu-22.04',
    description: 'Ubuntu 22.04 LTS (Jammy) cloud image',
    containerDisk: 'quay.io/containerdisks/ubuntu:22.04',
    defaultUser: 'ubuntu',
    category: 'server',
    logo: 'ubuntu',
  },
  {
    name: 'debian',
    description: 'Debian 12 (Bookworm) generic cloud',
    containerDisk: 'quay.io/containerdisks/debian:12',
    defaultUser: 'debian',
    category: 'server',
    logo: 'debian',
  },
  {
    name: 'centos-stream',
    description: 'CentOS Stream 10',
    containerDisk: 'quay.io/containerdisks/centos-stream:10',
    defaultUser: 'cloud-user',
    category: 'server',
    logo: 'centos',
  },
  {
    name: 'opensuse',
    description: 'openSUSE Tumbleweed',
    containerDisk: 'quay.io/containerdisks/opensuse-tumbleweed:1.0.0',
    defaultUser: 'opensuse',
    category: 'server',
    logo: 'opensuse',
  },
  {
    name: 'fedora-workstation',
    description: 'Fedora 42 with a desktop (VNC console)',
    containerDisk: 'quay.io/containerdisks/fedora:42',
    defaultUser: 'fedora',
    category: 'desktop',
    logo: 'fedora',
  },
  {
    name: 'cirros',
    description: 'CirrOS 0.6 — a tiny test image',
    containerDisk: 'quay.io/kubevirt/cirros-container-disk-demo:latest',
    defaultUser: 'cirros',
    category: 'appliance',
    logo: 'cirros',
  },
  {
    name: 'alpine',
    description: 'Alpine Linux — minimal appliance base',
    containerDisk: 'quay.io/kubevirt/alpine-container-disk-demo:latest',
    defaultUser: 'root',
    category: 'appliance',
    logo: 'alpine',
  },
];

export const CURATED_NAMES: ReadonlySet<string> = new Set(CURATED_IMAGES.map((i) => i.name));

/** Curated images followed by the custom sources (flag `custom: true`); custom ones never shadow curated names. */
export async function listCatalog(cluster: ClusterPort, namespace: string): Promise<CatalogImage[]> {
  const curated = CURATED_NAMES;
  const custom = (await readSources(cluster, namespace))
    .filter((s) => !curated.has(s.name))
    .map<CatalogImage>((s) => ({
      name: s.name,
      description: s.description ?? '',
      containerDisk: s.kind === 'containerDisk' ? s.uri : '',
      defaultUser: '',
      category: 'server',
      custom: true,
      kind: s.kind,
      uri: s.uri,
    }));
  return [...CURATED_IMAGES, ...custom];
}
