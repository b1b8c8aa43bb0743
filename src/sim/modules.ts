/**
 * The cluster components the embedded cluster runs by default, in start order. Each helper area adds its module
 * here. The fleet module must stay LAST: it seeds objects after every controller has subscribed to the store.
 */
import { consolesModule } from './consoles/index.js';
import { fleetModule } from './fleet/index.js';
import { garbageCollectorModule } from './gc/index.js';
import { kubevirtModule } from './kubevirt/index.js';
import type { SimModule } from './module.js';
import { storageModule } from './storage/index.js';

export function defaultModules(): SimModule[] {
  return [
    garbageCollectorModule(),
    kubevirtModule(),
    storageModule(),
    consolesModule(),
    fleetModule(), // must stay last
  ];
}
