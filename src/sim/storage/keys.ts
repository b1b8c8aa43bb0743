/** Store keys (`<group>/<plural>`) of every kind the storage controllers (CDI, CSI, snapshot, export, jobs) touch. */
import { resourceKey } from '../store/types.js';

export const S = {
  namespaces: resourceKey('', 'namespaces'),
  nodes: resourceKey('', 'nodes'),
  pods: resourceKey('', 'pods'),
  services: resourceKey('', 'services'),
  secrets: resourceKey('', 'secrets'),
  events: resourceKey('', 'events'),
  pvcs: resourceKey('', 'persistentvolumeclaims'),
  pvs: resourceKey('', 'persistentvolumes'),
  storageClasses: resourceKey('storage.k8s.io', 'storageclasses'),
  volumeSnapshotClasses: resourceKey('snapshot.storage.k8s.io', 'volumesnapshotclasses'),
  volumeSnapshots: resourceKey('snapshot.storage.k8s.io', 'volumesnapshots'),
  cdiConfigs: resourceKey('cdi.kubevirt.io', 'cdiconfigs'),
  dataVolumes: resourceKey('cdi.kubevirt.io', 'datavolumes'),
  kubevirts: resourceKey('kubevirt.io', 'kubevirts'),
  vms: resourceKey('kubevirt.io', 'virtualmachines'),
  vmis: resourceKey('kubevirt.io', 'virtualmachineinstances'),
  vmSnapshots: resourceKey('snapshot.kubevirt.io', 'virtualmachinesnapshots'),
  vmSnapshotContents: resourceKey('snapshot.kubevirt.io', 'virtualmachinesnapshotcontents'),
  vmRestores: resourceKey('snapshot.kubevirt.io', 'virtualmachinerestores'),
  vmClones: resourceKey('clone.kubevirt.io', 'virtualmachineclones'),
  vmExports: resourceKey('export.kubevirt.io', 'virtualmachineexports'),
  jobs: resourceKey('batch', 'jobs'),
  cronJobs: resourceKey('batch', 'cronjobs'),
  serviceAccounts: resourceKey('', 'serviceaccounts'),
} as const;

/** Annotations CDI puts on the PVCs it manages [src: CDI pkg/controller/common/util.go]. */
export const CDI_ANN = {
  endpoint: 'cdi.kubevirt.io/storage.import.endpoint',
  source: 'cdi.kubevirt.io/storage.import.source',
  contentType: 'cdi.kubevirt.io/storage.contentType',
  podPhase: 'cdi.kubevirt.io/storage.pod.phase',
  podRestarts: 'cdi.kubevirt.io/storage.pod.restarts',
  podRunning: 'cdi.kubevirt.io/storage.condition.running',
  podRunningReason: 'cdi.kubevirt.io/storage.condition.running.reason',
  podRunningMessage: 'cdi.kubevirt.io/storage.condition.running.message',
  importPodName: 'cdi.kubevirt.io/storage.import.importPodName',
  cloneRequest: 'k8s.io/CloneRequest',
  createdForDataVolume: 'cdi.kubevirt.io/createdForDataVolume',
  bindImmediate: 'cdi.kubevirt.io/storage.bind.immediate.requested',
  uploadReady: 'cdi.kubevirt.io/storage.pod.ready',
} as const;

/**
 * What a simulated disk "contains": a short description carried from import / clone / restore / bootc build to
 * every copy, and baked into the raw image an export serves, so a test can follow data through the pipeline.
 */
export const DISK_CONTENT_ANNOTATION = 'sim.corral.dev/disk-content';
/**
 * Size in bytes of the raw image an export serves for this claim (default: the 4 MiB image alone). Larger images
 * are the 4 MiB image followed by deterministic, partly compressible filler, streamed (benchmarks, abort tests).
 */
export const EXPORT_BYTES_ANNOTATION = 'sim.corral.dev/export-bytes';
/**
 * Where the bytes of an uploaded volume live (a file in the embedded cluster's own directory, written by the
 * upload proxy); the export server serves that file instead of a generated image.
 */
export const UPLOAD_FILE_ANNOTATION = 'sim.corral.dev/upload-file';
/** The pod log the sim's kubelet would stream for pods the storage controllers run (importer, job pods). */
export const POD_LOG_ANNOTATION = 'sim.corral.dev/log';
/** Marks pods whose phase the storage controllers drive, so a generic simulated kubelet leaves them alone. */
export const SIM_CONTROLLED_POD_ANNOTATION = 'sim.corral.dev/phase-driven-by';
