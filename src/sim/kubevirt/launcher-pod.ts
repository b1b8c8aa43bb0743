/** The virt-launcher pod virt-controller renders for a VMI (labels and shape per KubeVirt's template.go). */
import type { KObject, NewObject } from '../store/types.js';
import { HOSTNAME_LABEL, LAUNCHER_IMAGE } from './keys.js';
import type { Json } from './objects.js';
import { digArray, digRecord, digString, ownerRef } from './objects.js';
import { launcherRequests } from './sizing.js';

export const CREATED_BY_LABEL = 'kubevirt.io/created-by';
export const MIGRATION_JOB_LABEL = 'kubevirt.io/migrationJobUID';

export interface LauncherOptions {
  /** Target pod of a migration: pinned away from the source node and to the source's CPU vendor. */
  migration?: { uid: string; sourceNode: string; cpuVendorLabel?: string; addedNodeSelector?: Record<string, string> };
}

export function launcherPod(vmi: KObject, options: LauncherOptions = {}): NewObject {
  const spec = (vmi.spec ?? {}) as Json;
  const domain = digRecord(spec, 'domain');
  const nodeSelector: Record<string, string> = {
    'kubevirt.io/schedulable': 'true',
    ...((spec.nodeSelector as Record<string, string> | undefined) ?? {}),
    ...(options.migration?.addedNodeSelector ?? {}),
  };
  if (options.migration?.cpuVendorLabel) nodeSelector[options.migration.cpuVendorLabel] = 'true';
  const containerDisks = digArray(spec, 'volumes').filter((v) => digString(v, 'containerDisk', 'image'));
  const labels: Record<string, string> = {
    ...(vmi.metadata.labels ?? {}),
    'kubevirt.io': 'virt-launcher',
    [CREATED_BY_LABEL]: vmi.metadata.uid,
    'vm.kubevirt.io/name': vmi.metadata.name,
    'vmi.kubevirt.io/id': vmi.metadata.name,
    ...(options.migration ? { [MIGRATION_JOB_LABEL]: options.migration.uid } : {}),
  };
  delete labels['kubevirt.io/nodeName'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `virt-launcher-${vmi.metadata.name}-`,
      namespace: vmi.metadata.namespace,
      labels,
      annotations: {
        'kubectl.kubernetes.io/default-container': 'compute',
        'kubevirt.io/domain': vmi.metadata.name,
        'kubevirt.io/migrationTransportUnix': 'true',
        'post.hook.backup.velero.io/container': 'compute',
      },
      ownerReferences: [ownerRef(vmi)],
    },
    spec: {
      automountServiceAccountToken: false,
      hostname: digString(spec, 'hostname') ?? vmi.metadata.name,
      nodeSelector,
      ...(options.migration
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: HOSTNAME_LABEL, operator: 'NotIn', values: [options.migration.sourceNode] },
                      ],
                    },
                  ],
                },
              },
            },
          }
        : spec.affinity
          ? { affinity: spec.affinity }
          : {}),
      restartPolicy: 'Never',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: ((spec.terminationGracePeriodSeconds as number | undefined) ?? 180) + 15,
      containers: [
        {
          name: 'compute',
          image: LAUNCHER_IMAGE,
          command: [
            '/usr/bin/virt-launcher-monitor',
            '--qemu-timeout',
            '278s',
            '--name',
            vmi.metadata.name,
            '--uid',
            vmi.metadata.uid,
            '--namespace',
            vmi.metadata.namespace,
          ],
          resources: {
            requests: launcherRequests(domain),
            limits: {
              'devices.kubevirt.io/kvm': '1',
              'devices.kubevirt.io/tun': '1',
              'devices.kubevirt.io/vhost-net': '1',
            },
          },
        },
        { name: 'guest-console-log', image: LAUNCHER_IMAGE, resources: { requests: { cpu: '5m', memory: '35M' } } },
        ...containerDisks.map((v) => ({
          name: `volume${String(v.name)}`,
          image: digString(v, 'containerDisk', 'image'),
          resources: { requests: { cpu: '1m', memory: '1M' } },
        })),
      ],
    },
    status: { phase: 'Pending', qosClass: 'Burstable' },
  };
}

/** The attachment pod KubeVirt starts on the VMI's node to mount hot-plugged volumes. */
export function hotplugPod(vmi: KObject, node: string, claims: string[]): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'hp-volume-',
      namespace: vmi.metadata.namespace,
      labels: { 'kubevirt.io': 'hotplug-disk', [CREATED_BY_LABEL]: vmi.metadata.uid },
      ownerReferences: [ownerRef(vmi)],
    },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      containers: [
        { name: 'hotplug-disk', image: LAUNCHER_IMAGE, resources: { requests: { cpu: '10m', memory: '2M' } } },
      ],
      volumes: claims.map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })),
    },
    status: { phase: 'Pending' },
  };
}
