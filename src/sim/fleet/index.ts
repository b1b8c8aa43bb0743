/**
 * The fleet seeder: a SimModule that must start LAST (after every controller subscribed to the store) and fills
 * the cluster per `options.fleet` — `empty` (the baseline install only), `demo`, or a number of generated VMs.
 */
import type { SimContext, SimModule } from '../module.js';
import { BASELINE_NODES, seedBaseline } from './baseline.js';
import { seedDemo } from './demo.js';
import { generatedNodes, seedGenerated } from './generated.js';

export { MAX_GENERATED_VMS } from './generated.js';

export function seedFleet(ctx: SimContext): void {
  const fleet = ctx.options.fleet;
  if (typeof fleet === 'number') {
    const nodes = generatedNodes(fleet);
    seedBaseline(ctx.store, nodes, ctx.options.baseline);
    seedGenerated(ctx.store, fleet, nodes);
    return;
  }
  seedBaseline(ctx.store, BASELINE_NODES, ctx.options.baseline);
  if (fleet === 'demo') seedDemo(ctx.store);
}

export function fleetModule(): SimModule {
  return {
    name: 'fleet',
    start(ctx: SimContext) {
      seedFleet(ctx);
    },
  };
}
