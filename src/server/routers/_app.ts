/**
 * The app router: every Corral procedure. Others extend it by adding a router file and one line here (the Proxmox
 * helper's snapshots/scale/clone/... routers). Procedure names are a stable contract with the UI and the SDK.
 */
import { router } from '../trpc';
import { capabilities, imagesRouter, instancetypesRouter, nodesRouter, tasksRouter, whoami } from './cluster';
import { consolesRouter } from './consoles';
import { liveRouter } from './live';
import { vmsRouter } from './vms';

export const appRouter = router({
  vms: vmsRouter,
  images: imagesRouter,
  tasks: tasksRouter,
  nodes: nodesRouter,
  instancetypes: instancetypesRouter,
  whoami,
  capabilities,
  live: liveRouter,
  consoles: consolesRouter,
});

export type AppRouter = typeof appRouter;
