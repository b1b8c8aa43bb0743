/** What the `/nodes/{node}/qemu/…` endpoints share: resolving the VM, its UPIDs, its config context, vCPU bounds. */
import { sizedHardware } from '@/server/domain/vm-hardware';
import { startOnBoot } from '@/server/domain/vm-hw-options';
import { vmRuntime } from '@/server/domain/vm-runtime';
import type { DomainDeps } from '@/server/domain/deps';
import { readCloudInit, settingsToPveKeys } from '@/server/domain/vm-cloudinit';
import { adoptLegacyCloudInit } from '../cloudinit-legacy';
import { corral } from '../errors';
import { pveUser, type ResolvedVm } from '../state';
import { vmConfig, type RowContext } from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { vmAcl, type EndpointContext } from './context';
import { pveStorages } from '../storage-map';

export const VM_AUDIT = (name = 'VM.Audit') => ({ name, path: vmAcl });

export function rowContext(ctx: EndpointContext, vmid: number, row: ResolvedVm['row']): RowContext {
  const lock = ctx.state.lockOf(row.namespace, row.name);
  return {
    vmid,
    row,
    node: ctx.state.vmNode(row),
    ...(lock ? { lock } : {}),
    runtime: vmRuntime(ctx.state.services.deps, row.namespace, row.name),
    io: ctx.state.io.totals(row.namespace, row.name),
  };
}

export function resolve(ctx: EndpointContext): ResolvedVm {
  return ctx.state.resolveVm(ctx.path.node ?? '', ctx.path.vmid ?? '');
}

/** The UPID of a journal task; `vm` pins vmid and node when the VM is not (or no longer) indexed. */
export function upid(ctx: EndpointContext, taskId: string, vm?: { vmid: number; node: string }): string {
  const task = ctx.state.services.journal.get(taskId);
  if (!task) throw new ProxmoxError(500, `internal: task ${taskId} vanished from the journal`);
  if (vm) return ctx.state.upids.upidFor(task, { ...vm, user: pveUser(task.caller) });
  return ctx.state.upidOfJournalTask(task);
}

/** A VM from before the cloud-init domain may still hold plaintext ci* keys in its extras: moved before any use. */
export async function adoptLegacyKeys(ctx: EndpointContext, vm: ResolvedVm): Promise<void> {
  await corral(
    adoptLegacyCloudInit(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name),
  );
}

export async function configContext(ctx: EndpointContext, vm: ResolvedVm) {
  const { services } = ctx.state;
  await adoptLegacyKeys(ctx, vm);
  // An instancetype-sized VM has no CPU/memory in its template: the domain fills them in from the instancetype.
  const hw = await corral(sizedHardware(services.deps, vm.ref.namespace, vm.ref.name));
  const storages = await pveStorages(services);
  const defaultStorage =
    storages.find((s) => s.storage === 'local-lvm')?.storage ??
    storages.find((s) => s.type === 'lvmthin')?.storage ??
    '';
  return {
    hw,
    row: vm.row,
    defaultStorage,
    runtime: vmRuntime(services.deps, vm.ref.namespace, vm.ref.name),
    startOnBoot: startOnBoot(services.deps, vm.ref.namespace, vm.ref.name),
    cloudInit: await corral(cloudInitKeys(services.deps, vm.ref.namespace, vm.ref.name)),
  };
}

async function cloudInitKeys(deps: DomainDeps, namespace: string, name: string): Promise<Record<string, string>> {
  const ci = await readCloudInit(deps, namespace, name);
  return settingsToPveKeys(ci.settings, ci.passwordSet);
}

export async function currentConfig(ctx: EndpointContext, vm: ResolvedVm): Promise<Record<string, unknown>> {
  return vmConfig(await configContext(ctx, vm));
}

// ---------------------------------------------------------------------------------------------------------------

/** Corral's bounds for a VM (issue 14's strict input): 1–512 vCPUs, 64 MiB – 4 TiB of memory. */
export const MAX_VCPUS = 512;
export const CORES = { min: 1, max: MAX_VCPUS };
export const SOCKETS = { min: 1, max: 64 };
export const MEMORY_MIB = { min: 64, max: 4 * 1024 * 1024 };

export function requireVcpus(cores: number, sockets: number): void {
  if (cores * sockets > MAX_VCPUS)
    throw paramError({ cores: `cores × sockets must be at most ${MAX_VCPUS} (got ${cores} × ${sockets})` });
}
