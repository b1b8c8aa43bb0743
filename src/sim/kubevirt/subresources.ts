/**
 * `subresources.kubevirt.io/v1` verbs as virt-api answers them (methods, bodies, status codes and messages of
 * pkg/virt-api/rest/lifecycle.go, subresource.go and volumes.go). Lifecycle verbs edit the VM (run strategy or
 * stateChangeRequests) and leave the rest to the controllers, as the real API does.
 */
import type { SimContext, SubresourceResult, SubresourceRoute } from '../module.js';
import { ApiError, badRequest } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { kubevirtConfig } from './config.js';
import { guestImageOf } from './guest-images.js';
import { K } from './keys.js';
import { isHotpluggable } from './live-update.js';
import { migrationRefusal, webhookDenial } from './migration.js';
import type { Json } from './objects.js';
import {
  digArray,
  digRecord,
  digString,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
  status,
} from './objects.js';
import { runStrategyOf, stateChangeRequests } from './run-strategy.js';
import type { StateChangeRequest } from './run-strategy.js';
import { expandDomain } from './sizing.js';
import { isFinal, vmiPhase } from './vmi-status.js';

type Request = Parameters<SubresourceRoute['handle']>[1];

const ACCEPTED: SubresourceResult = { status: 202 };
const OK: SubresourceResult = { status: 200 };

/** virt-api's `errors.NewConflict(v1.Resource("virtualmachine"), name, err)`. */
function conflict(resource: 'virtualmachine' | 'virtualmachineinstance', name: string, message: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resource}.kubevirt.io "${name}": ${message}`,
    {
      name,
      group: 'kubevirt.io',
      kind: resource,
    },
  );
}

/** Guest-agent verbs fail with 500 (`response.WriteError(500, err)` in virt-api). */
function agentError(name: string, message: string): ApiError {
  return new ApiError(
    500,
    'InternalError',
    `Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "${name}": ${message}`,
  );
}

function body(request: Request): Json {
  const b = request.body;
  if (b === undefined || b === null || b === '') return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw badRequest('the request body must be a JSON object');
  return b as Json;
}

function isDryRun(options: Json): boolean {
  return Array.isArray(options.dryRun) && options.dryRun.includes('All');
}

function ownedVmi(ctx: SimContext, vm: KObject): KObject | undefined {
  const vmi = ctx.store.get(K.vmis, vm.metadata.namespace, vm.metadata.name);
  return vmi && (vmi.metadata.ownerReferences ?? []).some((r) => r.uid === vm.metadata.uid) ? vmi : undefined;
}

function isRunningVmi(vmi: KObject | undefined): vmi is KObject {
  return vmi !== undefined && !isFinal(vmi) && vmiPhase(vmi) !== 'Unknown';
}

/** Flip the run strategy the way virt-api's JSON patch does (spec.running when the VM uses the legacy field). */
function setRunStrategy(vm: KObject, strategy: 'Always' | 'Halted'): void {
  const spec = vm.spec as Json;
  if (typeof spec.running === 'boolean' && spec.runStrategy === undefined) spec.running = strategy === 'Always';
  else spec.runStrategy = strategy;
}

function appendRequests(vm: KObject, requests: StateChangeRequest[]): void {
  const st = (vm.status ?? {}) as Json;
  st.stateChangeRequests = [...stateChangeRequests(vm), ...requests];
  vm.status = st;
}

function setVmiGrace(ctx: SimContext, vmi: KObject, seconds: number): void {
  ctx.store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
    (v.spec as Json).terminationGracePeriodSeconds = seconds;
  });
}

function start(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const restore = (vm.status as Json | undefined)?.restoreInProgress;
  if (typeof restore === 'string')
    throw conflict('virtualmachine', req.name, `Cannot start VM until restore "${restore}" completes`);
  const vmi = ownedVmi(ctx, vm);
  if (isRunningVmi(vmi)) throw conflict('virtualmachine', req.name, 'VM is already running');
  const strategy = runStrategyOf(vm);
  if (strategy === 'Always' || strategy === 'Once')
    throw conflict('virtualmachine', req.name, `${strategy} does not support manual start requests`);
  if (isDryRun(options)) return ACCEPTED;
  const paused = options.paused === true;
  ctx.store.mutate(K.vms, req.namespace, req.name, (v) => {
    if (strategy === 'Halted') setRunStrategy(v, 'Always');
    if (strategy !== 'Halted' || paused)
      appendRequests(v, [{ action: 'Start', ...(paused ? { data: { startPaused: 'true' } } : {}) }]);
  });
  return ACCEPTED;
}

function stop(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const grace = options.gracePeriod;
  if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0)) {
    throw badRequest('gracePeriod must be a non-negative integer');
  }
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const vmi = ownedVmi(ctx, vm);
  const strategy = runStrategyOf(vm);
  const running = isRunningVmi(vmi);
  const currentGrace = (vmi?.spec as Json | undefined)?.terminationGracePeriodSeconds;
  if (strategy === 'Halted') {
    if (!running) throw conflict('virtualmachine', req.name, 'VM is not running');
    const shorter = typeof grace === 'number' && (typeof currentGrace !== 'number' || grace < currentGrace);
    if (!shorter)
      throw conflict(
        'virtualmachine',
        req.name,
        'Halted only supports manual stop requests with a shorter graceperiod',
      );
    if (!isDryRun(options)) setVmiGrace(ctx, vmi, grace);
    return ACCEPTED;
  }
  if ((strategy === 'Manual' || strategy === 'RerunOnFailure') && !running)
    throw conflict('virtualmachine', req.name, 'VM is not running');
  if (isDryRun(options)) return ACCEPTED;
  if (running && typeof grace === 'number') setVmiGrace(ctx, vmi, grace);
  ctx.store.mutate(K.vms, req.namespace, req.name, (v) => {
    if (strategy === 'Manual' || strategy === 'RerunOnFailure')
      appendRequests(v, [{ action: 'Stop', uid: vmi!.metadata.uid }]);
    else setRunStrategy(v, 'Halted');
  });
  return ACCEPTED;
}

function restart(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const grace = options.gracePeriodSeconds;
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const strategy = runStrategyOf(vm);
  if (strategy === 'Halted' || strategy === 'Once')
    throw conflict('virtualmachine', req.name, `RunStategy ${strategy} does not support manual restart requests`);
  if (grace !== undefined && grace !== 0)
    throw badRequest('For force restart, only gracePeriod=0 is supported for now');
  const vmi = ownedVmi(ctx, vm);
  if (!isRunningVmi(vmi)) throw conflict('virtualmachine', req.name, 'VM is not running: Halted');
  if (isDryRun(options)) return ACCEPTED;
  if (grace === 0) setVmiGrace(ctx, vmi, 0);
  ctx.store.mutate(K.vms, req.namespace, req.name, (v) =>
    appendRequests(v, [{ action: 'Stop', uid: vmi.metadata.uid }, { action: 'Start' }]),
  );
  return ACCEPTED;
}

function migrate(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const vmi = ownedVmi(ctx, vm);
  if (!vmi || vmiPhase(vmi) !== 'Running') throw conflict('virtualmachine', req.name, 'VM is not running');
  const selector = options.addedNodeSelector;
  if (selector !== undefined && (typeof selector !== 'object' || selector === null || Array.isArray(selector))) {
    throw badRequest('addedNodeSelector must be a map of label keys to values');
  }
  const refusal = migrationRefusal(ctx, vmi);
  if (refusal) throw webhookDenial(refusal);
  if (isDryRun(options)) return ACCEPTED;
  ctx.store.create(K.vmims, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: {
      generateName: 'kubevirt-migrate-vm-',
      namespace: req.namespace,
      labels: { 'kubevirt.io/vmi-name': req.name },
    },
    spec: { vmiName: req.name, ...(selector ? { addedNodeSelector: selector } : {}) },
  });
  return ACCEPTED;
}

function requireHotplugGate(ctx: SimContext): void {
  const gates = kubevirtConfig(ctx.store).featureGates;
  if (!gates.has('HotplugVolumes') && !gates.has('DeclarativeHotplugVolumes')) {
    throw badRequest('Enable DeclarativeHotplugVolumes or HotplugVolumes feature gate to use this API.');
  }
}

/** Validate AddVolumeOptions and turn them into the volume + disk pair KubeVirt adds. */
function volumeFromOptions(options: Json): { volume: Json; disk: Json } {
  const name = options.name;
  if (typeof name !== 'string' || !name) throw badRequest('AddVolumeOptions requires name to be set');
  const disk = digRecord(options, 'disk');
  if (!disk) throw badRequest('AddVolumeOptions requires disk to not be nil');
  const source = digRecord(options, 'volumeSource');
  if (!source) throw badRequest('AddVolumeOptions requires VolumeSource to not be nil');
  const claim = digString(source, 'persistentVolumeClaim', 'claimName');
  const dv = digString(source, 'dataVolume', 'name');
  if (!claim && !dv) throw badRequest('AddVolumeOptions requires a persistentVolumeClaim or dataVolume volume source');
  const volume: Json = claim
    ? { name, persistentVolumeClaim: { claimName: claim, hotpluggable: true } }
    : { name, dataVolume: { name: dv, hotpluggable: true } };
  // Hot-plugged disks attach on the SCSI bus whatever the caller asked for.
  const diskSpec: Json = { ...disk, name, disk: { ...(digRecord(disk, 'disk') ?? {}), bus: 'scsi' } };
  if (disk.serial === undefined && typeof options.serial === 'string') diskSpec.serial = options.serial;
  return { volume, disk: diskSpec };
}

function addVolumeTo(spec: Json, volume: Json, disk: Json): void {
  spec.volumes = [...digArray(spec, 'volumes'), volume];
  const domain = (spec.domain ?? {}) as Json;
  const devices = (domain.devices ?? {}) as Json;
  devices.disks = [...digArray(devices, 'disks'), disk];
  domain.devices = devices;
  spec.domain = domain;
}

function removeVolumeFrom(spec: Json, name: string): void {
  spec.volumes = digArray(spec, 'volumes').filter((v) => v.name !== name);
  const devices = digRecord(spec, 'domain', 'devices');
  if (devices) devices.disks = digArray(devices, 'disks').filter((d) => d.name !== name);
}

function vmAddVolume(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const { volume, disk } = volumeFromOptions(options);
  requireHotplugGate(ctx);
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const name = String(volume.name);
  if (digArray(vm, 'spec', 'template', 'spec', 'volumes').some((v) => v.name === name)) {
    throw conflict(
      'virtualmachine',
      req.name,
      `Unable to add volume [${name}] because volume with that name already exists`,
    );
  }
  if (isDryRun(options)) return ACCEPTED;
  ctx.store.mutate(K.vms, req.namespace, req.name, (v) => {
    const template = ((v.spec as Json).template ?? {}) as Json;
    template.spec ??= {};
    addVolumeTo(template.spec as Json, volume, disk);
    (v.spec as Json).template = template;
  });
  return ACCEPTED;
}

function vmRemoveVolume(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const name = options.name;
  if (typeof name !== 'string' || !name) throw badRequest('RemoveVolumeOptions requires name to be set');
  requireHotplugGate(ctx);
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const volume = digArray(vm, 'spec', 'template', 'spec', 'volumes').find((v) => v.name === name);
  if (!volume)
    throw conflict('virtualmachine', req.name, `Unable to remove volume [${name}] because it does not exist`);
  if (!isHotpluggable(volume))
    throw conflict('virtualmachine', req.name, `Unable to remove volume [${name}] because it is not hotpluggable`);
  if (isDryRun(options)) return ACCEPTED;
  ctx.store.mutate(K.vms, req.namespace, req.name, (v) =>
    removeVolumeFrom(((v.spec as Json).template as Json).spec as Json, name),
  );
  return ACCEPTED;
}

function standaloneVmi(ctx: SimContext, req: Request): KObject {
  const vmi = ctx.store.mustGet(K.vmis, req.namespace, req.name);
  if ((vmi.metadata.ownerReferences ?? []).some((r) => r.kind === 'VirtualMachine')) {
    throw badRequest(
      `VMI ${req.namespace}/${req.name} is owned by a VM, use the VM's addvolume/removevolume subresource instead`,
    );
  }
  if (vmiPhase(vmi) !== 'Running') throw conflict('virtualmachineinstance', req.name, 'VMI is not running');
  return vmi;
}

function vmiAddVolume(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const { volume, disk } = volumeFromOptions(options);
  requireHotplugGate(ctx);
  const vmi = standaloneVmi(ctx, req);
  if (digArray(vmi, 'spec', 'volumes').some((v) => v.name === volume.name)) {
    throw conflict(
      'virtualmachineinstance',
      req.name,
      `Unable to add volume [${String(volume.name)}] because volume with that name already exists`,
    );
  }
  if (!isDryRun(options))
    ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => addVolumeTo(v.spec as Json, volume, disk));
  return ACCEPTED;
}

function vmiRemoveVolume(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const name = options.name;
  if (typeof name !== 'string' || !name) throw badRequest('RemoveVolumeOptions requires name to be set');
  requireHotplugGate(ctx);
  const vmi = standaloneVmi(ctx, req);
  const volume = digArray(vmi, 'spec', 'volumes').find((v) => v.name === name);
  if (!volume)
    throw conflict('virtualmachineinstance', req.name, `Unable to remove volume [${name}] because it does not exist`);
  if (!isHotpluggable(volume))
    throw conflict(
      'virtualmachineinstance',
      req.name,
      `Unable to remove volume [${name}] because it is not hotpluggable`,
    );
  if (!isDryRun(options))
    ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => removeVolumeFrom(v.spec as Json, name));
  return ACCEPTED;
}

function expandSpec(ctx: SimContext, req: Request): SubresourceResult {
  const vm = ctx.store.mustGet(K.vms, req.namespace, req.name);
  const expanded = structuredClone(vm);
  const template = digRecord(expanded, 'spec', 'template');
  if (template) {
    template.spec ??= {};
    (template.spec as Json).domain = expandDomain(ctx.store, vm, template);
    if (expanded.spec) {
      delete (expanded.spec as Json).instancetype;
      delete (expanded.spec as Json).preference;
    }
  }
  return { status: 200, body: expanded };
}

function runningVmi(ctx: SimContext, req: Request, notRunning: string): KObject {
  const vmi = ctx.store.mustGet(K.vmis, req.namespace, req.name);
  if (vmiPhase(vmi) !== 'Running' || vmi.metadata.deletionTimestamp)
    throw conflict('virtualmachineinstance', req.name, notRunning);
  return vmi;
}

function pause(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const vmi = runningVmi(ctx, req, 'VM is not running');
  if (isConditionTrue(vmi, 'Paused')) throw conflict('virtualmachineinstance', req.name, 'VMI is already paused');
  const probe = digRecord(vmi, 'spec', 'livenessProbe');
  if (probe && !probe.guestAgentPing) {
    throw new ApiError(403, 'Forbidden', 'Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported');
  }
  if (isDryRun(options)) return OK;
  const uid = vmi.metadata.uid;
  ctx.clock.after(200 + Math.random() * 300, () => {
    ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => {
      if (v.metadata.uid !== uid || vmiPhase(v) !== 'Running') return false;
      setCondition(v, {
        type: 'Paused',
        status: 'True',
        reason: 'PausedByUser',
        message: 'VMI was paused by user',
        probe: true,
      });
    });
  });
  return OK;
}

function unpause(ctx: SimContext, req: Request): SubresourceResult {
  const options = body(req);
  const vmi = runningVmi(ctx, req, 'VMI is not running');
  if (!isConditionTrue(vmi, 'Paused')) throw conflict('virtualmachineinstance', req.name, 'VMI is not paused');
  if (isDryRun(options)) return OK;
  const uid = vmi.metadata.uid;
  ctx.clock.after(200 + Math.random() * 300, () => {
    ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => {
      if (v.metadata.uid !== uid) return false;
      removeCondition(v, 'Paused');
      if (v.spec) delete (v.spec as Json).startStrategy;
    });
  });
  return OK;
}

/** The VMI, provided its guest agent is connected — else virt-api's 500. */
function agentVmi(ctx: SimContext, req: Request): KObject {
  const vmi = ctx.store.mustGet(K.vmis, req.namespace, req.name);
  if (vmiPhase(vmi) !== 'Running') throw agentError(req.name, 'VMI is not running');
  if (!isConditionTrue(vmi, 'AgentConnected')) throw agentError(req.name, 'VMI does not have guest agent connected');
  return vmi;
}

function preferenceOf(ctx: SimContext, vmi: KObject): string | undefined {
  const vm = ctx.store.get(K.vms, vmi.metadata.namespace, vmi.metadata.name);
  return digString(vm, 'spec', 'preference', 'name');
}

function loginTime(vmi: KObject): number {
  const running = digArray(vmi, 'status', 'phaseTransitionTimestamps').find((t) => t.phase === 'Running');
  const at = Date.parse(String(running?.phaseTransitionTimestamp ?? vmi.metadata.creationTimestamp));
  return Math.round(at / 10 + 2500) / 100; // ~25 s after boot, seconds with 2 decimals like the agent
}

function filesystems(ctx: SimContext, vmi: KObject): Json[] {
  const image = guestImageOf(ctx.store, vmi, preferenceOf(ctx, vmi));
  const rootClaim = digArray(vmi, 'status', 'volumeStatus').find((v) => v.persistentVolumeClaimInfo);
  const capacity = digString(rootClaim, 'persistentVolumeClaimInfo', 'capacity', 'storage');
  const total = capacity ? Number.parseInt(capacity, 10) * 2 ** 30 : 20 * 2 ** 30;
  const totalBytes = Number.isFinite(total) && total > 0 ? total : 20 * 2 ** 30;
  return [
    {
      diskName: image.rootFs.diskName,
      mountPoint: '/',
      fileSystemType: image.rootFs.fileSystemType,
      usedBytes: Math.round(Math.min(image.rootFs.usedBytes, totalBytes * 0.9)),
      totalBytes,
      disk: [{ busType: 'virtio', serial: vmi.metadata.uid.slice(0, 20) }],
    },
  ];
}

function guestOsInfo(ctx: SimContext, req: Request): SubresourceResult {
  const vmi = agentVmi(ctx, req);
  const image = guestImageOf(ctx.store, vmi, preferenceOf(ctx, vmi));
  const frozen = digString(vmi, 'status', 'fsFreezeStatus') === 'frozen';
  return {
    status: 200,
    body: {
      guestAgentVersion: '9.2.0',
      hostname: digString(vmi, 'spec', 'hostname') ?? vmi.metadata.name,
      timezone: 'UTC, 0',
      fsFreezeStatus: frozen ? 'frozen' : 'thawed',
      os: { ...image.os },
      supportedCommands: [
        'guest-ping',
        'guest-get-osinfo',
        'guest-get-users',
        'guest-get-fsinfo',
        'guest-fsfreeze-freeze',
        'guest-fsfreeze-thaw',
        'guest-shutdown',
        'guest-network-get-interfaces',
      ].map((name) => ({ name, enabled: true })),
      userList: [{ userName: image.user, loginTime: loginTime(vmi) }],
      fsInfo: { disks: filesystems(ctx, vmi) },
    },
  };
}

function userList(ctx: SimContext, req: Request): SubresourceResult {
  const vmi = agentVmi(ctx, req);
  const image = guestImageOf(ctx.store, vmi, preferenceOf(ctx, vmi));
  return {
    status: 200,
    body: { metadata: {}, items: [{ userName: image.user, domain: '', loginTime: loginTime(vmi) }] },
  };
}

function filesystemList(ctx: SimContext, req: Request): SubresourceResult {
  const vmi = agentVmi(ctx, req);
  return { status: 200, body: { metadata: {}, items: filesystems(ctx, vmi) } };
}

/** Reboot inside the guest: the agent drops and reconnects, the VMI stays Running on the same node. */
function reboot(ctx: SimContext, req: Request, soft: boolean): SubresourceResult {
  const vmi = runningVmi(ctx, req, 'VMI is not running');
  if (
    soft &&
    !isConditionTrue(vmi, 'AgentConnected') &&
    digRecord(vmi, 'spec', 'domain', 'features', 'acpi')?.enabled === false
  ) {
    throw conflict(
      'virtualmachineinstance',
      req.name,
      'VMI neither have the agent connected nor the ACPI feature enabled',
    );
  }
  if (isConditionTrue(vmi, 'Paused')) throw conflict('virtualmachineinstance', req.name, 'VMI is paused');
  const hadAgent = findCondition(vmi, 'AgentConnected');
  ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => {
    removeCondition(v, 'AgentConnected');
    status(v).guestOSInfo = {};
  });
  if (hadAgent) {
    const uid = vmi.metadata.uid;
    ctx.clock.after(20_000, () => {
      ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => {
        if (v.metadata.uid !== uid || vmiPhase(v) !== 'Running') return false;
        setCondition(v, { type: 'AgentConnected', status: 'True', transition: false });
        status(v).guestOSInfo = { ...guestImageOf(ctx.store, v, preferenceOf(ctx, v)).os };
      });
    });
  }
  return OK;
}

function freeze(ctx: SimContext, req: Request, frozen: boolean): SubresourceResult {
  const vmi = runningVmi(ctx, req, 'VMI is not running');
  if (!isConditionTrue(vmi, 'AgentConnected'))
    throw conflict('virtualmachineinstance', req.name, 'VMI does not have guest agent connected');
  ctx.store.mutate(K.vmis, req.namespace, req.name, (v) => {
    if (frozen) status(v).fsFreezeStatus = 'frozen';
    else delete status(v).fsFreezeStatus;
  });
  return OK;
}

export function kubevirtSubresources(): SubresourceRoute[] {
  const vm = (
    verb: string,
    methods: string[],
    handle: (ctx: SimContext, req: Request) => SubresourceResult,
  ): SubresourceRoute => ({
    resource: 'virtualmachines',
    verb,
    methods,
    handle,
  });
  const vmi = (
    verb: string,
    methods: string[],
    handle: (ctx: SimContext, req: Request) => SubresourceResult,
  ): SubresourceRoute => ({
    resource: 'virtualmachineinstances',
    verb,
    methods,
    handle,
  });
  return [
    vm('start', ['PUT'], start),
    vm('stop', ['PUT'], stop),
    vm('restart', ['PUT'], restart),
    vm('migrate', ['PUT'], migrate),
    vm('addvolume', ['PUT'], vmAddVolume),
    vm('removevolume', ['PUT'], vmRemoveVolume),
    vm('expand-spec', ['GET'], expandSpec),
    vmi('pause', ['PUT'], pause),
    vmi('unpause', ['PUT'], unpause),
    vmi('guestosinfo', ['GET'], guestOsInfo),
    vmi('userlist', ['GET'], userList),
    vmi('filesystemlist', ['GET'], filesystemList),
    vmi('addvolume', ['PUT'], vmiAddVolume),
    vmi('removevolume', ['PUT'], vmiRemoveVolume),
    vmi('softreboot', ['PUT'], (ctx, req) => reboot(ctx, req, true)),
    vmi('reset', ['PUT'], (ctx, req) => reboot(ctx, req, false)),
    vmi('freeze', ['PUT'], (ctx, req) => freeze(ctx, req, true)),
    vmi('unfreeze', ['PUT'], (ctx, req) => freeze(ctx, req, false)),
  ];
}
