/**
 * Containers (CTs, ADR-0005 in the spec README): a "pet pod" is a bare Pod `<ct>` plus its data PVC `<ct>-data`.
 * The PVC is the CT's durable identity: it carries the labels and the spec as JSON in an annotation, so Stop can
 * delete the pod and Start can build the very same pod again from the PVC alone.
 *
 * Unprivileged (default): the volume is mounted at `/data`; everything else is the image's throw-away root.
 * Privileged: an init container copies the image's root filesystem onto the volume once (a marker file says it is
 * done) and the container chroots into that copy, so package installs and dotfiles survive Stop/Start.
 */
import type { KObject } from './cluster-port';
import { LABEL_TAG_PREFIX, LABEL_VMID } from './labels';
import type { VmidSource } from './vmids';

export const LABEL_CT = 'corral.dev/ct';
export const LABEL_CT_NAME = 'corral.dev/ct-name';
export const ANNOTATION_CT_SPEC = 'corral.ct/spec';
/** Free text about the CT (Proxmox's `description`), kept on its PVC beside the spec. */
export const ANNOTATION_CT_DESCRIPTION = 'corral.ct/description';
/** Where a privileged CT's persistent root lives on its data volume (mounted at /data in the pod). */
export const CT_ROOTFS = '/data/rootfs';
/** Written by the seeding init container once the copy is complete; a missing marker means "seed again". */
export const CT_SEEDED_MARKER = `${CT_ROOTFS}/.corral-seeded`;
export const CT_CONTAINER = 'main';
export const CT_SEED_CONTAINER = 'seed-rootfs';

/** What a CT is, as recorded on its PVC (the `POST /api/cts` body with the defaults filled in). */
export interface CtSpec {
  name: string;
  namespace: string;
  image: string;
  cpu: number;
  mem: string;
  disk: string;
  storageClass: string;
  privileged: boolean;
}

export const dataClaimName = (ct: string): string => `${ct}-data`;

export function ctLabels(ct: string): Record<string, string> {
  return { [LABEL_CT]: 'true', [LABEL_CT_NAME]: ct };
}

const parsed = new WeakMap<KObject, CtSpec | undefined>();

/**
 * The spec recorded on a CT's PVC, or undefined when the annotation is missing or unreadable (the object is then
 * not treated as a CT). Memoised per object: the cache hands out the same object until it changes.
 */
export function specOfClaim(pvc: KObject): CtSpec | undefined {
  if (parsed.has(pvc)) return parsed.get(pvc);
  let spec: CtSpec | undefined;
  try {
    const raw = JSON.parse(pvc.metadata.annotations?.[ANNOTATION_CT_SPEC] ?? '') as Partial<CtSpec>;
    const name = pvc.metadata.labels?.[LABEL_CT_NAME] ?? '';
    if (name && typeof raw.image === 'string' && raw.image) {
      spec = {
        name,
        namespace: pvc.metadata.namespace ?? '',
        image: raw.image,
        cpu: typeof raw.cpu === 'number' && raw.cpu > 0 ? raw.cpu : 1,
        mem: typeof raw.mem === 'string' && raw.mem ? raw.mem : '512Mi',
        disk: typeof raw.disk === 'string' ? raw.disk : '',
        storageClass: typeof raw.storageClass === 'string' ? raw.storageClass : '',
        privileged: raw.privileged === true,
      };
    }
  } catch {
    spec = undefined;
  }
  parsed.set(pvc, spec);
  return spec;
}

/** The CT's data PVC as a CT (its spec parses and names this very claim), or undefined for any other PVC. */
export function ctClaimSpec(pvc: KObject): CtSpec | undefined {
  if (pvc.metadata.labels?.[LABEL_CT] !== 'true') return undefined;
  const spec = specOfClaim(pvc);
  return spec && dataClaimName(spec.name) === pvc.metadata.name ? spec : undefined;
}

/** What the vmid index needs to know about a CT: its data PVC carries the `corral.io/proxmox-vmid` label. */
export function ctVmidSourceOf(pvc: KObject, spec: CtSpec): VmidSource {
  const label = pvc.metadata.labels?.[LABEL_VMID];
  const created = Date.parse(pvc.metadata.creationTimestamp ?? '');
  return {
    namespace: spec.namespace,
    name: spec.name,
    kind: 'ct',
    ...(label !== undefined ? { label } : {}),
    ...(Number.isFinite(created) ? { created } : {}),
  };
}

/** Tags of a CT: `corral.dev/tag.<tag>` labels on its PVC, as VMs carry them on the VirtualMachine. */
export function ctTags(pvc: KObject): string[] {
  return Object.entries(pvc.metadata.labels ?? {})
    .filter(([k, v]) => k.startsWith(LABEL_TAG_PREFIX) && v === 'true')
    .map(([k]) => k.slice(LABEL_TAG_PREFIX.length))
    .sort();
}

/** Labels and annotations a creator adds to the PVC beside Corral's own (a vmid, tags, a description). */
export interface ClaimExtras {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function claimManifest(spec: CtSpec, extras: ClaimExtras = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: dataClaimName(spec.name),
      namespace: spec.namespace,
      labels: { ...extras.labels, ...ctLabels(spec.name) },
      annotations: { ...extras.annotations, [ANNOTATION_CT_SPEC]: JSON.stringify(spec) },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: spec.disk } },
      ...(spec.storageClass ? { storageClassName: spec.storageClass } : {}),
    },
  };
}

// Sleeps in the foreground of a shell that exits on SIGTERM, so Stop ends the pod at once instead of after the grace
// period (PID 1 ignores signals it has no handler for).
const IDLE = 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done';

/** Copies the image's root (not the mount points of the kernel or the volume itself) onto the volume once. */
const SEED_SCRIPT = [
  'set -e',
  `[ -e ${CT_SEEDED_MARKER} ] && exit 0`,
  `rm -rf ${CT_ROOTFS}`,
  `mkdir -p ${CT_ROOTFS}`,
  `tar -C / --one-file-system --exclude=./data --exclude=./proc --exclude=./sys --exclude=./dev -cf - . | tar -C ${CT_ROOTFS} -xpf -`,
  `mkdir -p ${CT_ROOTFS}/proc ${CT_ROOTFS}/sys ${CT_ROOTFS}/dev ${CT_ROOTFS}/data`,
  `touch ${CT_SEEDED_MARKER}`,
].join('\n');

/** Mounts the kernel file systems into the persistent root and idles inside it. */
const CHROOT_SCRIPT = [
  `mount -t proc proc ${CT_ROOTFS}/proc`,
  `mount --rbind /sys ${CT_ROOTFS}/sys`,
  `mount --rbind /dev ${CT_ROOTFS}/dev`,
  `exec chroot ${CT_ROOTFS} /bin/sh -c '${IDLE.replaceAll("'", "'\\''")}'`,
].join(' && ');

/** The command an interactive shell in the CT runs (privileged CTs enter their persistent root). */
export function ctShellCommand(spec: Pick<CtSpec, 'privileged'>): string[] {
  return spec.privileged ? ['chroot', CT_ROOTFS, '/bin/sh'] : ['/bin/sh'];
}

export function podManifest(spec: CtSpec): KObject {
  const cpu = String(spec.cpu);
  const volumeMounts = [{ name: 'data', mountPath: '/data' }];
  const securityContext = { privileged: spec.privileged };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name, namespace: spec.namespace, labels: ctLabels(spec.name) },
    spec: {
      hostname: spec.name,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 10,
      enableServiceLinks: false,
      ...(spec.privileged
        ? {
            initContainers: [
              {
                name: CT_SEED_CONTAINER,
                image: spec.image,
                command: ['/bin/sh', '-c', SEED_SCRIPT],
                securityContext,
                volumeMounts,
              },
            ],
          }
        : {}),
      containers: [
        {
          name: CT_CONTAINER,
          image: spec.image,
          command: ['/bin/sh', '-c', spec.privileged ? CHROOT_SCRIPT : IDLE],
          resources: {
            requests: { cpu, memory: spec.mem },
            limits: { cpu, memory: spec.mem },
          },
          securityContext,
          volumeMounts,
          stdin: true,
          tty: true,
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: dataClaimName(spec.name) } }],
    },
  };
}
