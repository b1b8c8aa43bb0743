/**
 * Move to a Proxmox VE host (ADR-0010, backend `pve`), the preflight: it only reads (the source cluster and the
 * host's API) and answers every refusal with its remedy, the warnings and what PVE cannot take, plus the plan the
 * commit (move-pve-commit.ts) follows after running it again. The hosts and the destinations list are in
 * move-pve-hosts.ts.
 *
 * One way only: KubeVirt → PVE. PVE's API has no way to download a disk, so a VM on a PVE host cannot be moved
 * to KubeVirt over it; every PVE destination says so.
 *
 * What travels: each claim disk as a raw image uploaded as PVE 8.2's `import` content and imported by the create
 * (`scsiN=<storage>:0,import-from=<storage>:import/<file>`), cores, memory, NICs (virtio on one bridge, new MACs),
 * tags, a description naming the source, and cloud-init settings PVE's own cloud-init drive takes.
 */
import type { MoveInput, MovePreflight } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { CorralError } from '../errors';
import {
  answerLists,
  busyRefusals,
  claimDisk,
  exportRefusal,
  planSource,
  snapshotsLeft,
  sourceDownRefusal,
} from './move-checks';
import { resolveSource } from './move-destinations';
import { hostFacts, hostProblem, pveHost, PVE_BACKEND } from './move-pve-hosts';
import type { PveHost } from './move-pve-port';
import { nodePins } from './move-spec';
import { formatRef } from './pools-path';
import { quantityToNumber } from './quantity';
import { decode, secretNameOf, settingsToPveKeys } from './vm-cloudinit-keys';
import { readCloudInit } from './vm-cloudinit';
import {
  asArray,
  asDict,
  asString,
  claimSize,
  rootVolume,
  vmCpu,
  vmiActive,
  vmMem,
  vmTags,
  vmVolumes,
} from './vm-facts';

export interface PveDisk {
  volume: string;
  claim: string;
  size: string;
  /** The PVE disk key it becomes (`scsi0`, …). */
  key: string;
  /** The file it is uploaded as (`import/<file>` on the import storage). */
  file: string;
}

export interface PvePlanned {
  preflight: MovePreflight;
  source: DomainDeps;
  vm: KObject;
  host: PveHost;
  node: string;
  importStorage: string;
  diskStorage: string;
  /** The vmid asked for; undefined: the host's next free one at commit. */
  vmid: number | undefined;
  disks: PveDisk[];
  /** `POST /nodes/{node}/qemu` parameters except vmid and the disks. */
  params: Record<string, string | number>;
}

/** PVE's cloud-init keys the move carries (PVE's drive takes no user-data document without a snippet). */
const PVE_CI_KEYS = /^(ciuser|sshkeys|ipconfig\d+|nameserver|searchdomain|citype|ciupgrade)$/;

export async function planPveMove(deps: DomainDeps, input: MoveInput): Promise<PvePlanned> {
  if (input.toNamespace !== undefined)
    throw new CorralError('BAD_REQUEST', 'toNamespace: a Proxmox VE host has no namespaces; leave it out');
  if (input.scratch) throw new CorralError('BAD_REQUEST', 'scratch: a move to a Proxmox VE host always streams');
  const src = resolveSource(deps, input.ref);
  const { ref, deps: source, vm } = src;
  const host = pveHost(deps, input.toContext);
  const name = input.name ?? ref.name;
  const { refusals, warnings, dropped, refuse } = answerLists();

  if (!sourceDownRefusal(source, ref, refuse)) await exportRefusal(source, refuse);
  busyRefusals(source, ref, 'VM', 'move', !!vm.metadata.deletionTimestamp, refuse);

  // The host: answering, our token accepted, a node, an import storage and a disk storage.
  const facts = await hostFacts(host, {
    ...(input.toNode ? { node: input.toNode } : {}),
    ...(input.toStorage ? { storage: input.toStorage } : {}),
  });
  refusals.push(...facts.refusals);
  if (facts.node && facts.refusals.length === 0) {
    try {
      const guests = await host.guests();
      if (input.vmid !== undefined) {
        const taken = guests.find((g) => g.vmid === input.vmid);
        if (taken)
          refuse(
            `vmid ${input.vmid} is taken on ${host.name} (${taken.type} ${taken.name || '(no name)'} on ${taken.node})`,
            'pick another vmid, or leave it out for the next free one',
          );
      }
      const clash = guests.find((g) => g.name === name);
      if (clash)
        refuse(
          `a guest named ${name} already exists on ${host.name} (vmid ${clash.vmid} on ${clash.node})`,
          'give the moved VM another name (name), or remove that guest first',
        );
    } catch (err) {
      refusals.push(hostProblem(host, err));
    }
  }

  // The disks: every claim disk is exported and uploaded; other volume kinds stay behind.
  const disks: PveDisk[] = [];
  const spec = asDict(vm.spec);
  const root = rootVolume(vm);
  const volumes = vmVolumes(vm);
  const claims = volumes.filter((v) => v.kind === 'dataVolume' || v.kind === 'persistentVolumeClaim');
  if (claims.length === 0)
    refuse(
      `VM ${ref.namespace}/${ref.name} has no disk on a claim`,
      'a VM booting from a containerDisk has nothing to move to PVE',
    );
  if (claims.length > 0 && root && root.kind !== 'dataVolume' && root.kind !== 'persistentVolumeClaim')
    refuse(
      `the boot disk ${root.volume} is a ${root.kind} while other disks are on claims: KubeVirt's export of this VM is refused`,
      'make the boot disk a DataVolume, or detach the claim disks first',
    );
  for (const v of volumes) {
    if (v.kind === 'cloudInit') continue;
    if (v.kind === 'containerDisk' || v.kind === 'other') {
      dropped.push(
        `disk ${v.volume} (${v.kind === 'containerDisk' ? 'a containerDisk' : 'not on a claim'}): PVE gets only claim disks`,
      );
      continue;
    }
    const pvc = claimDisk(source, ref.namespace, v, refuse);
    if (!pvc) continue;
    const size = asString(asDict(asDict(pvc.status).capacity).storage) || claimSize(pvc);
    const key = `scsi${disks.length}`;
    disks.push({ volume: v.volume, claim: v.claim, size, key, file: `${name}-${v.volume}.raw` });
  }
  const avail = facts.diskStorage?.avail;
  const total = disks.reduce((sum, d) => sum + (quantityToNumber(d.size) || 0), 0);
  if (avail !== undefined && total > avail)
    refuse(
      `storage ${facts.diskStorage?.storage} on ${host.name} has ${avail} bytes free, the disks need ${total}`,
      'free space there, or pick another storage (toStorage)',
    );

  // The VM definition PVE gets.
  const cores = vmCpu(vm);
  const memMiB = Math.max(16, Math.round((quantityToNumber(vmMem(vm)) || 0) / 2 ** 20));
  const bridge = input.bridge ?? 'vmbr0';
  const params: Record<string, string | number> = {
    name,
    cores,
    memory: memMiB,
    scsihw: 'virtio-scsi-single',
    ostype: 'l26',
    description: `moved from ${formatRef(ref)} by Corral`,
  };
  const tags = vmTags(vm).filter((t) => /^[a-z0-9_][a-z0-9_+.-]*$/i.test(t));
  if (tags.length) params.tags = tags.join(';');
  if (disks.length) params.boot = `order=${disks.map((d) => d.key).join(';')}`;
  const nics = asArray(asDict(asDict(asDict(asDict(asDict(spec.template).spec).domain).devices)).interfaces);
  nics.forEach((_, i) => (params[`net${i}`] = `virtio,bridge=${bridge}`));
  if (nics.length === 0) dropped.push('no NIC: the VM has none, so none is made on PVE');
  const multus = asArray(asDict(asDict(spec.template).spec).networks)
    .map(asDict)
    .filter((n) => n.multus !== undefined);
  if (multus.length)
    warnings.push(
      `${multus.length} Multus network${multus.length === 1 ? '' : 's'} (${multus.map((n) => asString(n.name)).join(', ')}): every NIC is put on bridge ${bridge}`,
    );

  // Cloud-init: PVE's drive takes its own keys; a hand-written user-data document has no place there.
  const ci = await readCloudInit(source, ref.namespace, ref.name).catch(() => undefined);
  if (ci?.drive) {
    if (ci.handWritten)
      dropped.push(
        "cloud-init user-data written by hand: PVE's cloud-init drive takes only user, password, SSH keys and network settings (a cicustom snippet would have to be put on the host's storage by hand)",
      );
    else {
      const keys = settingsToPveKeys(ci.settings, false);
      for (const [k, val] of Object.entries(keys)) if (PVE_CI_KEYS.test(k)) params[k] = val;
      if (keys.cicustom) dropped.push(`cicustom ${keys.cicustom}: snippets stay in Corral`);
      if (ci.passwordSet) {
        const secret = await source.cluster.fetch('Secret', ref.namespace, ci.drive.secret || secretNameOf(ref.name));
        const hash = decode(secret?.data, 'password');
        if (hash) params.cipassword = hash;
      }
      if (facts.diskStorage) params.ide2 = `${facts.diskStorage.storage}:cloudinit`;
    }
  }

  // What changes and what stays behind.
  warnings.push(
    `MAC and IP addresses change: PVE gives each NIC a new MAC on bridge ${bridge}, and the addresses come from that network`,
  );
  const isRunning = vmiActive(source.cluster.cache.get('VirtualMachineInstance', ref.namespace, ref.name));
  if (isRunning) warnings.push('the VM is running: it is stopped for the move and the moved VM is started on PVE');
  if (input.deleteSource) warnings.push(`the source ${ref.namespace}/${ref.name} is deleted once the VM runs on PVE`);
  for (const key of ['instancetype', 'preference'] as const) {
    const wanted = asString(asDict(spec[key]).name);
    if (wanted) dropped.push(`${key} ${wanted}: resolved into ${cores} cores and ${memMiB} MiB`);
  }
  for (const pin of nodePins(vm)) dropped.push(`node pin: ${pin}`);
  const snapshots = await snapshotsLeft(source, ref);
  if (snapshots) dropped.push(snapshots);
  const devices = asDict(asDict(asDict(asDict(spec.template).spec).domain).devices);
  for (const k of ['gpus', 'hostDevices'])
    if (asArray(devices[k]).length) dropped.push(`${k}: KubeVirt device passthrough does not carry over`);
  dropped.push('labels and annotations other than tags (PVE has no place for them)');

  const vmid = input.vmid;
  const steps = [
    ...(isRunning ? [`stop ${ref.namespace}/${ref.name}`] : []),
    ...disks.map(
      (d) =>
        `export disk ${d.volume} and upload it to ${host.name} as ${facts.importStorage?.storage ?? '?'}:import/${d.file}`,
    ),
    `create VM ${vmid ?? '(next free vmid)'} ${name} on ${host.name}/${facts.node ?? '?'} importing ${disks.length} disk${disks.length === 1 ? '' : 's'} onto ${facts.diskStorage?.storage ?? '?'}`,
    'delete the uploaded images from the import storage',
    ...(isRunning ? [`start it on ${host.name}`] : []),
    input.deleteSource ? `delete the source in ${ref.context}` : `keep the source in ${ref.context}, stopped`,
  ];
  const preflight: MovePreflight = {
    ok: refusals.length === 0,
    refusals,
    warnings,
    dropped,
    plan: {
      source: planSource(ref, isRunning),
      destination: {
        backend: PVE_BACKEND,
        context: host.name,
        namespace: '',
        name,
        ...(facts.node ? { node: facts.node } : {}),
        ...(vmid !== undefined ? { vmid } : {}),
      },
      disks: disks.map((d) => ({
        volume: d.volume,
        claim: d.claim,
        size: d.size,
        storageClass: facts.diskStorage?.storage ?? '',
        to: d.key,
      })),
      secrets: [],
      scratch: false,
      deleteSource: input.deleteSource ?? false,
      steps,
    },
  };
  return {
    preflight,
    source,
    vm,
    host,
    node: facts.node ?? '',
    importStorage: facts.importStorage?.storage ?? '',
    diskStorage: facts.diskStorage?.storage ?? '',
    vmid,
    disks,
    params,
  };
}
