/**
 * The image library as a VM source: an imported DataVolume (an import, an upload or a registry pull made on the
 * Images page) that a new VM clones as its root disk or attaches as install media. Only a finished image may be
 * used — a clone of a half-written volume would boot garbage, and an ISO still uploading is not an installer — so
 * the create refuses a missing image with a 400 naming the field and an unfinished one with a 409 naming its phase.
 * Library images are shared: deleting a VM that uses one detaches it and never deletes it (isLibraryImage).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import { dataVolumeRow, LABEL_IMAGE } from './datavolumes';
import type { DomainDeps } from './deps';
import { LABEL_VM } from './labels';
import { asDict, claimSize } from './vm-facts';

export interface LibraryImage {
  name: string;
  namespace: string;
  contentType: 'disk' | 'iso';
  /** What the volume holds now (the claim's capacity, else the DataVolume's request), '' when unknown. */
  size: string;
}

/** A DataVolume's phase line for a 409: `ImportInProgress (45%)`, `UploadReady (the upload was cut off: …)`. */
function phaseText(dv: KObject): string {
  const row = dataVolumeRow(dv);
  const detail = row.error || (row.progress !== null ? `${row.progress}%` : '');
  return detail ? `${row.phase} (${detail})` : row.phase;
}

/** Why the claim `name` is not a whole image yet (its DataVolume has not Succeeded), or null when it is. */
export function unfinishedImage(deps: DomainDeps, namespace: string, name: string): string | null {
  const dv = deps.cluster.cache.get('DataVolume', namespace, name);
  if (!dv || dataVolumeRow(dv).phase === 'Succeeded') return null;
  return `DataVolume ${namespace}/${name} is ${phaseText(dv)}, not Succeeded; wait for it to finish, or delete it and import it again`;
}

/** 409 naming the phase when the claim `name` belongs to a DataVolume that has not Succeeded. */
export function requireFinished(deps: DomainDeps, namespace: string, name: string, field: string): void {
  const why = unfinishedImage(deps, namespace, name);
  if (why) throw new CorralError('CONFLICT', `${field}: ${why}`);
}

/**
 * The library image `name` in `namespace`, checked for use as `want` through the request field `field`: 400 when it
 * does not exist, is a VM's own disk, or is the other content type; 409 when it has not finished importing.
 */
export function requireLibraryImage(
  deps: DomainDeps,
  namespace: string,
  name: string,
  field: string,
  want: 'disk' | 'iso',
): LibraryImage {
  const dv = deps.cluster.cache.get('DataVolume', namespace, name);
  if (!dv || dv.metadata.deletionTimestamp)
    throw new CorralError(
      'BAD_REQUEST',
      `${field}: no imported image (DataVolume) '${name}' in namespace ${namespace} (see GET /api/datavolumes)`,
    );
  const owner = dv.metadata.labels?.[LABEL_VM];
  if (owner)
    throw new CorralError(
      'BAD_REQUEST',
      `${field}: DataVolume ${namespace}/${name} is a disk of VM ${owner}, not an imported image; clone it with pvc instead`,
    );
  const row = dataVolumeRow(dv);
  if (row.contentType !== want)
    throw new CorralError(
      'BAD_REQUEST',
      want === 'iso'
        ? `${field}: ${namespace}/${name} is a disk image, not an ISO; use dataVolume to clone it as the root disk`
        : `${field}: ${namespace}/${name} is an ISO, not a disk image; use isoDataVolume to boot it as install media`,
    );
  requireFinished(deps, namespace, name, field);
  const claim = deps.cluster.cache.get('PersistentVolumeClaim', namespace, name);
  const capacity = asDict(asDict(claim?.status).capacity).storage;
  const size = typeof capacity === 'string' && capacity ? capacity : claimSize(claim) || row.size;
  return { name, namespace, contentType: row.contentType, size };
}

/**
 * Whether the DataVolume or claim `name` is a library image (labelled by the Images page, or the claim of such a
 * DataVolume) rather than something made for one VM.
 */
export function isLibraryImage(
  deps: DomainDeps,
  kind: 'DataVolume' | 'PersistentVolumeClaim',
  namespace: string,
  name: string,
): boolean {
  const library = (o: KObject | undefined) => !!o?.metadata.labels?.[LABEL_IMAGE] && !o.metadata.labels[LABEL_VM];
  const dv = deps.cluster.cache.get('DataVolume', namespace, name);
  if (library(dv)) return true;
  return kind === 'PersistentVolumeClaim' && library(deps.cluster.cache.get('PersistentVolumeClaim', namespace, name));
}
