/**
 * Doctor checks for storage: a default StorageClass for new VM disks, whether it allows volume expansion (disk
 * resize), and a VolumeSnapshotClass for its CSI driver (VM snapshots). The snapshot-class fix creates one for a
 * driver known to snapshot without extra parameters; others (Ceph needs a clusterID and secrets) are explained, not
 * guessed at.
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { finding, listOrAbsent, unreadable, type Finding } from './doctor-types';
import { asString } from './vm-facts';

/** CSI drivers whose VolumeSnapshotClass needs no parameters: the fix can create one for them. */
export const SNAPSHOT_DRIVERS = new Set([
  'driver.longhorn.io',
  'ebs.csi.aws.com',
  'pd.csi.storage.gke.io',
  'disk.csi.azure.com',
  'hostpath.csi.k8s.io',
  'nfs.csi.k8s.io',
  'zfs.csi.openebs.io',
  'linstor.csi.linbit.com',
]);

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const DEFAULT_VIRT_CLASS = 'storageclass.kubevirt.io/is-default-virt-class';
const DEFAULT_SNAPSHOT_CLASS = 'snapshot.storage.kubernetes.io/is-default-class';

/** The class new VM disks get: KubeVirt's default virt class first, else the cluster default. */
export function defaultStorageClass(classes: KObject[]): { chosen?: KObject; defaults: KObject[] } {
  const marked = (key: string) => classes.filter((c) => c.metadata.annotations?.[key] === 'true');
  const virt = marked(DEFAULT_VIRT_CLASS);
  const defaults = virt.length ? virt : marked(DEFAULT_CLASS);
  return { chosen: defaults[0], defaults };
}

export async function storageChecks(deps: DomainDeps): Promise<Finding[]> {
  let classes: KObject[];
  try {
    classes = await deps.cluster.fetchList('StorageClass');
  } catch (err) {
    return [
      unreadable(
        { name: 'default-storageclass', area: 'storage', title: 'Default StorageClass' },
        'StorageClasses',
        err,
      ),
      unreadable({ name: 'volume-expansion', area: 'storage', title: 'Disk resize' }, 'StorageClasses', err),
      unreadable(
        { name: 'volumesnapshotclass', area: 'storage', title: 'VolumeSnapshotClass', affects: ['snapshots'] },
        'StorageClasses',
        err,
      ),
    ];
  }
  const { chosen, defaults } = defaultStorageClass(classes);
  const scName = asString(chosen?.metadata.name);
  const rows: Finding[] = [];

  const base = { name: 'default-storageclass', area: 'storage' as const, title: 'Default StorageClass' };
  if (!chosen)
    rows.push(
      finding({
        ...base,
        status: 'fail',
        affects: ['create'],
        message: classes.length
          ? `none of the ${classes.length} StorageClasses is marked default: new VM disks have no class to use (annotate one with ${DEFAULT_CLASS}=true)`
          : 'the cluster has no StorageClass: VM disks cannot be provisioned',
      }),
    );
  else if (defaults.length > 1)
    rows.push(
      finding({
        ...base,
        status: 'warn',
        message: `${defaults.length} StorageClasses are marked default (${defaults.map((c) => c.metadata.name).join(', ')}): new disks use ${scName}`,
      }),
    );
  else
    rows.push(finding({ ...base, status: 'ok', message: `${scName} (provisioner ${asString(chosen.provisioner)})` }));

  const expand = {
    name: 'volume-expansion',
    area: 'storage' as const,
    title: 'Disk resize',
    affects: ['expand' as const],
  };
  if (!chosen) rows.push(finding({ ...expand, status: 'warn', message: 'no default StorageClass to grow disks on' }));
  else if (chosen.allowVolumeExpansion === true)
    rows.push(finding({ ...expand, status: 'ok', message: `${scName} allows volume expansion: disks can grow` }));
  else
    rows.push(
      finding({
        ...expand,
        status: 'warn',
        warnTurnsOff: true,
        message: `${scName} does not allow volume expansion: disks cannot be resized (set allowVolumeExpansion: true if its driver ${asString(chosen.provisioner)} supports it)`,
      }),
    );

  rows.push(await snapshotClassRow(deps, chosen));
  return rows;
}

async function snapshotClassRow(deps: DomainDeps, sc: KObject | undefined): Promise<Finding> {
  const base = {
    name: 'volumesnapshotclass',
    area: 'storage' as const,
    title: 'VolumeSnapshotClass',
    affects: ['snapshots' as const],
  };
  let snapshotClasses: KObject[] | 'absent';
  try {
    snapshotClasses = await listOrAbsent(() => deps.cluster.fetchList('VolumeSnapshotClass'));
  } catch (err) {
    return unreadable(base, 'VolumeSnapshotClasses', err);
  }
  if (snapshotClasses === 'absent')
    return finding({
      ...base,
      status: 'fail',
      message:
        'the VolumeSnapshot CRDs (snapshot.storage.k8s.io) are not installed: install the external-snapshotter CRDs and controller',
    });
  const driver = asString(sc?.provisioner);
  if (!sc) {
    return finding({
      ...base,
      status: snapshotClasses.length ? 'ok' : 'fail',
      message: snapshotClasses.length
        ? `${snapshotClasses.length} VolumeSnapshotClass(es); no default StorageClass to match them against`
        : 'no VolumeSnapshotClass: VM snapshots are unavailable',
    });
  }
  const matching = snapshotClasses.filter((c) => asString(c.driver) === driver);
  if (matching.length)
    return finding({
      ...base,
      status: 'ok',
      message: `${matching.map((c) => c.metadata.name).join(', ')} snapshots ${sc.metadata.name} (driver ${driver})`,
    });
  const message = `no VolumeSnapshotClass for driver ${driver} of the default StorageClass ${sc.metadata.name}: VM snapshots are unavailable`;
  if (!SNAPSHOT_DRIVERS.has(driver))
    return finding({
      ...base,
      status: 'fail',
      message: `${message}; create one with driver: ${driver} and the parameters its driver documents`,
    });
  const name = `${asString(sc.metadata.name)}-snapshot`;
  const makeDefault = !snapshotClasses.some((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS] === 'true');
  return finding({
    ...base,
    status: 'fail',
    message,
    fix: `create VolumeSnapshotClass ${name} (driver ${driver}, deletionPolicy Delete${makeDefault ? ', the default class' : ''})`,
    apply: async (changed) => {
      await deps.cluster.create('VolumeSnapshotClass', {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: {
          name,
          labels: { 'app.kubernetes.io/managed-by': 'corral' },
          ...(makeDefault ? { annotations: { [DEFAULT_SNAPSHOT_CLASS]: 'true' } } : {}),
        },
        driver,
        deletionPolicy: 'Delete',
      });
      changed(
        `created VolumeSnapshotClass ${name} (driver ${driver}, deletionPolicy Delete${makeDefault ? ', default' : ''})`,
      );
    },
  });
}
