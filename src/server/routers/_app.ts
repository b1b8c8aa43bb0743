/**
 * The app router: every Corral procedure. Others extend it by adding a router file and one line here (the Proxmox
 * helper's snapshots/scale/clone/... routers). Procedure names are a stable contract with the UI and the SDK.
 */
import { router } from '../trpc';
import { bulkRouter } from './bulk';
import { capabilities, contextsRouter, imagesRouter, instancetypesRouter, nodesRouter, whoami } from './cluster';
import { consolesRouter } from './consoles';
import { ctsRouter } from './cts';
import { doctorRouter } from './doctor';
import { extensionsRouter } from './extensions';
import { schedulesRouter } from './schedules';
import { dataVolumesRouter, sourcesRouter } from './images';
import { liveRouter } from './live';
import { metricsRouter } from './metrics';
import { moveRouter } from './move';
import { poolsRouter } from './pools';
import { proxmoxRouter } from './proxmox';
import { clonesRouter, templatesRouter } from './vm-copy';
import { hardwareRouter, nadsRouter } from './vm-hardware';
import { cloudInitRouter } from './vm-cloudinit';
import { diskMoveRouter } from './vm-disk-move';
import { vmObserveRouter } from './vm-observe';
import { snapshotsRouter } from './vm-snapshots';
import { tasksRouter } from './tasks';
import { vmsRouter } from './vms';

export const appRouter = router({
  // Before `vms`: their static sub-paths must match ahead of its `POST …/{action}` (first match wins).
  snapshots: snapshotsRouter,
  clones: clonesRouter,
  templates: templatesRouter,
  hardware: hardwareRouter,
  cloudInit: cloudInitRouter,
  disks: diskMoveRouter,
  metrics: metricsRouter,
  observe: vmObserveRouter,
  vms: vmsRouter,
  cts: ctsRouter,
  pools: poolsRouter,
  move: moveRouter,
  bulk: bulkRouter,
  images: imagesRouter,
  sources: sourcesRouter,
  dataVolumes: dataVolumesRouter,
  tasks: tasksRouter,
  nodes: nodesRouter,
  contexts: contextsRouter,
  instancetypes: instancetypesRouter,
  nads: nadsRouter,
  whoami,
  capabilities,
  doctor: doctorRouter,
  extensions: extensionsRouter,
  proxmox: proxmoxRouter,
  schedules: schedulesRouter,
  live: liveRouter,
  consoles: consolesRouter,
});

export type AppRouter = typeof appRouter;
