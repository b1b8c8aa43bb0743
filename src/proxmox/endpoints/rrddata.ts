/**
 * `GET /nodes/{node}/qemu/{vmid}/rrddata` and `GET /nodes/{node}/rrddata`: the metrics store's retained history in
 * PVE's rrddata shape (rrd.ts says how timeframes and consolidation functions map onto the store's rings).
 */
import { nodeRrd, rrdQuery, vmRrd } from '../rrd';
import { parseQuantity } from '../translate/size';
import { define, nodeAcl, vmAcl, type Routes } from './context';
import { requireNode } from './nodes';
import { rowContext } from './qemu-common';

export function registerRrd(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/rrddata', {
    privilege: { name: 'VM.Audit', path: vmAcl },
    handle: (ctx) => {
      const vm = ctx.state.resolveVm(ctx.path.node ?? '', ctx.path.vmid ?? '');
      const { window } = rrdQuery(ctx.args);
      const rc = rowContext(ctx, vm.vmid, vm.row);
      const points = ctx.state.services.metricsStore.vmHistory(vm.ref.namespace, vm.ref.name, window);
      return vmRrd(points, {
        vcpus: vm.row.cpu,
        maxmem: parseQuantity(vm.row.mem) || rc.runtime.guestMemoryBytes,
      });
    },
  });
  define(table, 'GET', '/nodes/{node}/rrddata', {
    privilege: { name: 'Sys.Audit', path: nodeAcl },
    handle: (ctx) => {
      const n = requireNode(ctx);
      const { window } = rrdQuery(ctx.args);
      const points = ctx.state.services.metricsStore.sumHistory(window, n.row.name);
      return nodeRrd(points, { cores: n.maxcpu, memtotal: n.maxmem });
    },
  });
}
