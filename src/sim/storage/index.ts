/**
 * The embedded cluster's storage side as one SimModule: the CSI provisioner/resizer (PVC/PV), CDI (DataVolumes),
 * the snapshot controllers (VolumeSnapshot, VirtualMachineSnapshot, restore, clone), VirtualMachineExport with its
 * download server, a minimal batch/v1 Job controller, the CronJob controller and the ServiceAccount token controller.
 */
import type { SimContext, SimModule } from '../module.js';
import { storageAdmission } from './admission.js';
import { startCloneController } from './clone-controller.js';
import { startDataVolumeController } from './datavolume-controller.js';
import { startExportController } from './export-controller.js';
import { exportDownloadRoute } from './export-server.js';
import { startCronJobController } from './cronjob-controller.js';
import { startJobController } from './job-controller.js';
import { startTokenController } from './token-controller.js';
import { startPvcController } from './pvc-controller.js';
import { startRestoreController } from './restore-controller.js';
import { Runtime } from './runtime.js';
import { startSnapshotControllers } from './snapshot-controller.js';
import { UploadServer } from './upload-server.js';
import { S } from './keys.js';

export { admitPvcUpdate } from './pvc-controller.js';
export { podLogText } from './pods.js';
export { volumeSnapshotStatuses } from './snapshot-controller.js';
export { EXPORT_PATH_PREFIX, TOKEN_HEADER } from './export-controller.js';
export { UPLOAD_PROXY_PATH } from './upload-server.js';

/** A fresh module per embedded cluster (it holds that cluster's timers and queues). */
export function createStorageModule(): SimModule {
  let rt: Runtime | undefined;
  const uploads = new UploadServer(() => rt);
  return {
    name: 'storage',
    start(ctx: SimContext) {
      rt = new Runtime(ctx);
      startPvcController(rt);
      startDataVolumeController(rt);
      startSnapshotControllers(rt);
      startRestoreController(rt);
      startCloneController(rt);
      startExportController(rt);
      startJobController(rt);
      startCronJobController(rt);
      startTokenController(rt);
      // An uploaded volume's bytes go with its claim.
      if (rt.serves(S.pvcs)) rt.on(S.pvcs, (ev) => ev.type === 'DELETED' && uploads.forget(ev.object));
      uploads.publish(rt);
      rt.start();
    },
    rawRoutes: [exportDownloadRoute, uploads.tokenRoute, uploads.proxyRoute],
    admission: storageAdmission,
    stop() {
      rt?.stop();
      rt = undefined;
      uploads.stop();
    },
  };
}

/** The name modules.ts lists it under, like the other cluster components. */
export const storageModule = createStorageModule;
