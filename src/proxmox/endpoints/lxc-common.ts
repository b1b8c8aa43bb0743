/** What the `/nodes/{node}/lxc/…` endpoints share: resolving the CT, its row context, its config facts, its UPIDs. */
import { ctDiskUsed, ctRunningSince, ctUsage } from '@/server/domain/ct-runtime';
import { pveStorages, LVM_ALIAS } from '../storage-map';
import { lxcConfig, type CtConfigFacts, type CtContext } from '../ct-view';
import { pveUser, type ResolvedCt } from '../state';
import { ProxmoxError } from '../wire';
import type { EndpointContext } from './context';

export function resolveCt(ctx: EndpointContext): ResolvedCt {
  return ctx.state.resolveCt(ctx.path.node ?? '', ctx.path.vmid ?? '');
}

export function ctContext(ctx: EndpointContext, ct: ResolvedCt, now = Date.now()): CtContext {
  const lock = ctx.state.lockOf(ct.ref.namespace, ct.ref.name, true);
  const usage = ctUsage(ctx.state.services.deps, ct.ct.spec, ct.ct.pod);
  return {
    vmid: ct.vmid,
    ct: ct.ct,
    node: ctx.state.ctNode(ct.ct),
    ...(lock ? { lock } : {}),
    ...(usage ? { usage } : {}),
    since: ctRunningSince(ct.ct.pod),
    diskUsed: ctDiskUsed(ctx.state.services.deps, ct.ct.spec, ct.ct.pod),
    now,
  };
}

/** The storage id and architecture the config shows. */
export async function configFacts(ctx: EndpointContext, ct: ResolvedCt): Promise<CtConfigFacts> {
  const { services } = ctx.state;
  const requested = ct.ct.spec.storageClass || String(ct.ct.pvc.spec?.storageClassName ?? '');
  let storage = requested;
  if (!ct.ct.spec.storageClass) {
    // Created on the cluster default: shown as the storage Proxmox tools use for it (`local-lvm` when that alias exists).
    const storages = await pveStorages(services);
    storage = storages.find((s) => s.storage === LVM_ALIAS)?.storage ?? requested;
  }
  const nodeName = ct.ct.pod?.spec?.nodeName;
  const nodes = services.nodes.list();
  const node = nodes.find((n) => n.name === nodeName) ?? nodes[0];
  return { storage: storage || LVM_ALIAS, arch: node?.arch || 'amd64' };
}

export async function currentCtConfig(ctx: EndpointContext, ct: ResolvedCt): Promise<Record<string, unknown>> {
  return lxcConfig(ctContext(ctx, ct), await configFacts(ctx, ct));
}

/** The UPID of a CT's journal task, pinned to the CT's vmid and node (also once the CT is gone). */
export function ctUpid(ctx: EndpointContext, taskId: string, ct: ResolvedCt, type?: string): string {
  const task = ctx.state.services.journal.get(taskId);
  if (!task) throw new ProxmoxError(500, `internal: task ${taskId} vanished from the journal`);
  return ctx.state.upids.upidFor(task, {
    vmid: ct.vmid,
    node: ctx.state.ctNode(ct.ct),
    user: pveUser(task.caller),
    ...(type ? { type } : {}),
  });
}
