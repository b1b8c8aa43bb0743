/**
 * The KubeVirt side of the embedded cluster as one SimModule: kube-scheduler + kubelet for every pod, the VM,
 * VMI, migration and hot-plug controllers, the subresources.kubevirt.io verbs, metrics-server and the kubelets'
 * stats endpoints.
 */
import { notFoundPath } from '../http/wire.js';
import type { SimContext, SimModule } from '../module.js';
import { Kubelet } from './kubelet.js';
import { KubeletStats } from './kubelet-stats.js';
import { HotplugVolumes } from './hotplug.js';
import { K } from './keys.js';
import { LauncherPods } from './launcher-pods.js';
import { LiveUpdater } from './live-update.js';
import { VolumeMigrator } from './volume-migration.js';
import { SimMetrics } from './metrics.js';
import { MigrationController } from './migration.js';
import { PodIndex } from './pod-index.js';
import { kubevirtSubresources } from './subresources.js';
import { VmController } from './vm-controller.js';
import { VmiController } from './vmi-controller.js';

export function kubevirtModule(): SimModule {
  let stopAll: (() => void) | undefined;
  let metrics: SimMetrics | undefined;
  let stats: KubeletStats | undefined;
  return {
    name: 'kubevirt',
    subresources: kubevirtSubresources(),
    // The kubelets' stats/summary and metrics/cadvisor, through the apiserver's node proxy.
    rawRoutes: [
      {
        matches: (url, method) => KubeletStats.serves(url, method),
        handle: (ctx, req, res, url) => {
          if (!stats) throw notFoundPath(); // not started yet
          return stats.route.handle(ctx, req, res, url);
        },
      },
    ],
    metrics: {
      nodeMetrics: () => metrics?.nodeMetrics() ?? [],
      podMetrics: (namespace) => metrics?.podMetrics(namespace) ?? [],
    },
    start(ctx: SimContext) {
      const index = new PodIndex(ctx.store);
      const pods = new LauncherPods(ctx.store);
      const kubelet = new Kubelet(ctx, index);
      const volumeMigrator = new VolumeMigrator(ctx);
      const live = new LiveUpdater(ctx, volumeMigrator);
      const vms = new VmController(ctx, live);
      const vmis = new VmiController(ctx, pods, new HotplugVolumes(ctx));
      const migrations = new MigrationController(ctx, pods, volumeMigrator);
      metrics = new SimMetrics(ctx);
      stats = new KubeletStats(ctx, metrics);
      index.start();
      pods.load();
      const unsubscribe = ctx.store.subscribe((event) => {
        pods.onEvent(event);
        if (event.key === K.pods || event.key === K.vmis || event.key === K.dataVolumes) vmis.onEvent(event);
        if (event.key === K.vms || event.key === K.vmis || event.key === K.dataVolumes || event.key === K.pvcs)
          vms.onEvent(event);
        if (event.key === K.vmims || event.key === K.pods) migrations.onEvent(event);
      });
      kubelet.start();
      vms.start();
      vmis.start();
      migrations.start();
      stopAll = () => {
        unsubscribe();
        kubelet.stop();
        vms.stop();
        vmis.stop();
        migrations.stop();
        index.stop();
      };
    },
    stop() {
      stopAll?.();
    },
  };
}
