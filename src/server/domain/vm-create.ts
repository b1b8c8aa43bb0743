/**
 * Create a VM from exactly one source (api.md "POST /api/vms"). Everything written is labelled corral.dev/vm=<vm>
 * and recorded; if a step fails, what was already created is deleted again in reverse order and the error names
 * both the failure and anything the rollback could not remove — nothing is left half-created silently.
 */
import type { VmCreated, VmCreateInput } from '../schemas/vms';
import { CorralError, describeError } from '../errors';
import { listCatalog } from './catalog';
import { requireFinished, requireLibraryImage } from './library-image';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { normalizeSize } from './quantity';
import type { TaskHandle } from './tasks';
import { runAsTask } from './tasks';
import type { VmShape } from './vm-spec';
import { buildBootcJob, buildCloudInitSecret, buildDataVolume, buildVirtualMachine, composeUserData } from './vm-spec';
import { asDict } from './vm-facts';
import { cloudInitForCreate } from './vm-cloudinit';

const DEFAULT_CPU = 2;
const DEFAULT_MEM = '4Gi';
const DEFAULT_DISK = '20Gi';
/** ISO DataVolumes hold the installer image; 5Gi fits every common distribution's DVD. */
const ISO_SIZE = '5Gi';

interface Created {
  kind: Kind;
  namespace: string | undefined;
  name: string;
}

/** Writes objects and remembers them so a failure can undo exactly what this create made. */
class CreateTransaction {
  readonly created: Created[] = [];
  constructor(
    private readonly deps: DomainDeps,
    private readonly task: TaskHandle,
  ) {}

  async create(kind: Kind, object: KObject): Promise<KObject> {
    let out: KObject;
    try {
      out = await this.deps.cluster.create(kind, object);
    } catch (err) {
      // 404 on a create means the kind itself is not served (its CRD is missing), not a missing object.
      if (err instanceof CorralError && err.code === 'NOT_FOUND' && kind === 'DataVolume') {
        throw new CorralError(
          'NOT_IMPLEMENTED',
          'this cluster does not serve DataVolumes: install CDI (containerized-data-importer) for import, iso, pvc and bootc sources',
          { cause: err },
        );
      }
      throw err;
    }
    const name = out.metadata.name ?? object.metadata.name ?? '';
    this.created.push({ kind, namespace: object.metadata.namespace, name });
    this.task.log(`created ${kind} ${name}`);
    return out;
  }

  /** Undo in reverse order; returns what could not be removed. */
  async rollback(): Promise<string[]> {
    const failed: string[] = [];
    for (const c of [...this.created].reverse()) {
      try {
        await this.deps.cluster.remove(c.kind, c.namespace, c.name);
        this.task.log(`rolled back ${c.kind} ${c.name}`);
      } catch (err) {
        failed.push(`${c.kind} ${c.namespace}/${c.name} (${describeError(err)})`);
      }
    }
    return failed;
  }
}

async function ensureNamespace(deps: DomainDeps, namespace: string, task: TaskHandle): Promise<void> {
  if (await deps.cluster.fetch('Namespace', undefined, namespace)) return;
  try {
    await deps.cluster.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    task.log(`created namespace ${namespace}`);
  } catch (err) {
    if (!(err instanceof CorralError && err.code === 'CONFLICT')) throw err; // someone else created it meanwhile
  }
}

interface Plan {
  shape: Omit<VmShape, 'cloudInitSecret'>;
  dataVolumes: KObject[];
  defaultUser?: string;
  bootc?: { image: string; diskClaim: string };
}

async function planSource(deps: DomainDeps, input: VmCreateInput, namespace: string): Promise<Plan> {
  const { name } = input;
  const disk = normalizeSize(input.disk ?? DEFAULT_DISK);
  const base = {
    name,
    namespace,
    cpu: input.instancetype ? undefined : (input.cpu ?? DEFAULT_CPU),
    mem: input.instancetype ? undefined : normalizeSize(input.mem ?? DEFAULT_MEM),
    node: input.node,
    instancetype: input.instancetype,
    preference: input.preference,
    runStrategy: input.start === true ? ('Always' as const) : ('Halted' as const),
  };
  const diskName = `${name}-disk`;
  if (input.containerDisk !== undefined) {
    return {
      shape: { ...base, root: { containerDisk: input.containerDisk }, source: { containerDisk: input.containerDisk } },
      dataVolumes: [],
    };
  }
  if (input.image !== undefined) {
    const entry = (await listCatalog(deps.cluster, deps.config.defaultNamespace)).find((i) => i.name === input.image);
    if (!entry)
      throw new CorralError('BAD_REQUEST', `image: unknown catalog image '${input.image}' (see GET /api/images)`);
    const source = { image: entry.name };
    if (entry.kind === 'url' || entry.kind === 'iso') {
      return planSource(
        deps,
        { ...input, image: undefined, [entry.kind === 'url' ? 'import' : 'iso']: entry.uri },
        namespace,
      ).then((p) => ({
        ...p,
        shape: { ...p.shape, source },
      }));
    }
    return {
      shape: { ...base, root: { containerDisk: entry.containerDisk }, source },
      dataVolumes: [],
      defaultUser: entry.defaultUser || undefined,
    };
  }
  if (input.import !== undefined) {
    return {
      shape: { ...base, root: { dataVolume: diskName }, source: { import: input.import } },
      dataVolumes: [buildDataVolume(name, namespace, diskName, disk, { http: { url: input.import } })],
    };
  }
  if (input.iso !== undefined) {
    const isoName = `${name}-iso`;
    return {
      shape: { ...base, root: { dataVolume: diskName }, isoDataVolume: isoName, source: { iso: input.iso } },
      dataVolumes: [
        buildDataVolume(name, namespace, isoName, ISO_SIZE, { http: { url: input.iso } }),
        buildDataVolume(name, namespace, diskName, disk, { blank: {} }),
      ],
    };
  }
  if (input.pvc !== undefined) {
    const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, input.pvc);
    if (!pvc) throw new CorralError('BAD_REQUEST', `pvc: no PVC '${input.pvc}' in namespace ${namespace}`);
    // A DataVolume's claim is whole only once the DataVolume has Succeeded (an import or upload may be half done).
    requireFinished(deps, namespace, input.pvc, 'pvc');
    // Clone, never boot a library PVC in place: the clone must be at least as large as the source.
    const sourceSize = String(asDict(asDict(pvc.status).capacity).storage ?? '') || disk;
    return {
      shape: { ...base, root: { dataVolume: diskName }, source: { pvc: input.pvc } },
      dataVolumes: [
        buildDataVolume(name, namespace, diskName, larger(disk, sourceSize), { pvc: { namespace, name: input.pvc } }),
      ],
    };
  }
  if (input.dataVolume !== undefined) {
    const image = requireLibraryImage(deps, namespace, input.dataVolume, 'dataVolume', 'disk');
    return {
      shape: { ...base, root: { dataVolume: diskName }, source: { dataVolume: input.dataVolume } },
      dataVolumes: [
        buildDataVolume(name, namespace, diskName, larger(disk, image.size || disk), {
          pvc: { namespace, name: image.name },
        }),
      ],
    };
  }
  if (input.isoDataVolume !== undefined) {
    const iso = requireLibraryImage(deps, namespace, input.isoDataVolume, 'isoDataVolume', 'iso');
    return {
      shape: { ...base, root: { dataVolume: diskName }, isoClaim: iso.name, source: { isoDataVolume: iso.name } },
      dataVolumes: [buildDataVolume(name, namespace, diskName, disk, { blank: {} })],
    };
  }
  if (input.bootc !== undefined) {
    return {
      shape: { ...base, root: { dataVolume: diskName }, source: { bootc: input.bootc } },
      dataVolumes: [buildDataVolume(name, namespace, diskName, disk, { blank: {} })],
      bootc: { image: input.bootc, diskClaim: diskName },
    };
  }
  throw new CorralError(
    'BAD_REQUEST',
    'source: exactly one of containerDisk, image, import, iso, bootc, pvc, dataVolume, isoDataVolume is required',
  );
}

function larger(a: string, b: string): string {
  const bytes = (q: string) => {
    const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi)?$/.exec(q);
    const f: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
    return m ? Number(m[1]) * (m[2] ? (f[m[2]] ?? 1) : 1) : 0;
  };
  return bytes(b) > bytes(a) ? b : a;
}

function preflight(deps: DomainDeps, input: VmCreateInput, namespace: string): void {
  if (deps.cluster.cache.get('VirtualMachine', namespace, input.name)) {
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${input.name} already exists; pick another name or delete it first`,
    );
  }
  if (input.node !== undefined && !deps.cluster.cache.get('Node', undefined, input.node)) {
    throw new CorralError('BAD_REQUEST', `node: no node named '${input.node}' (see GET /api/nodes)`);
  }
}

export async function createVm(deps: DomainDeps, caller: Caller, input: VmCreateInput): Promise<VmCreated> {
  const namespace = input.namespace ?? deps.config.defaultNamespace;
  preflight(deps, input, namespace);
  const plan = await planSource(deps, input, namespace);
  const target = `${namespace}/${input.name}`;
  const login = caller.identity.login;

  if (plan.bootc) {
    const task = deps.journal.start('bootc', target, login);
    void buildBootcVm(deps, input, namespace, plan, task);
    return { task: task.id };
  }
  return runAsTask(deps.journal, 'create', target, login, async (task) => {
    const tx = new CreateTransaction(deps, task);
    try {
      await writeVm(deps, tx, task, input, namespace, plan);
    } catch (err) {
      throw await rolledBack(tx, err, target);
    }
    task.done(`VM ${target} created`);
    return { name: input.name, namespace, task: task.id };
  });
}

async function writeVm(
  deps: DomainDeps,
  tx: CreateTransaction,
  task: TaskHandle,
  input: VmCreateInput,
  namespace: string,
  plan: Plan,
): Promise<void> {
  await ensureNamespace(deps, namespace, task);
  task.progress(10);
  if (input.cloudInit === undefined && input.sshKey !== undefined) {
    // An SSH key alone is a cloud-init setting (the Cloud-Init tab and PVE's sshkeys edit it later); the image is
    // generated by the cloud-init domain, as a Proxmox create with sshkeys does.
    const ci = await cloudInitForCreate(
      deps,
      { name: input.name, namespace, macs: [] },
      { sshKeys: [input.sshKey.trim()], upgrade: false, ...(plan.defaultUser ? { user: plan.defaultUser } : {}) },
      undefined,
    );
    const secret = await tx.create('Secret', ci.secret);
    for (const dv of plan.dataVolumes) await tx.create('DataVolume', dv);
    task.progress(50);
    const vm = buildVirtualMachine({ ...plan.shape, cloudInitSecret: secret.metadata.name });
    vm.metadata.annotations = { ...vm.metadata.annotations, ...ci.annotations };
    await tx.create('VirtualMachine', withNetworkData(vm, secret.metadata.name ?? ''));
    task.progress(90);
    return;
  }
  // Hand-written user data stays the caller's own text (the Cloud-Init tab shows it read-only; its Secret is edited).
  const userData = composeUserData(input.cloudInit, input.sshKey, plan.defaultUser);
  let cloudInitSecret: string | undefined;
  if (userData !== undefined) {
    const secret = await tx.create('Secret', buildCloudInitSecret(input.name, namespace, userData));
    cloudInitSecret = secret.metadata.name;
  }
  for (const dv of plan.dataVolumes) await tx.create('DataVolume', dv);
  task.progress(50);
  await tx.create('VirtualMachine', buildVirtualMachine({ ...plan.shape, cloudInitSecret }));
  task.progress(90);
}

/** The generated image carries network-data too: the cloud-init volume references it, as the domain's drives do. */
function withNetworkData(vm: KObject, secret: string): KObject {
  const spec = asDict(asDict(asDict(vm.spec).template).spec);
  spec.volumes = (Array.isArray(spec.volumes) ? spec.volumes : []).map((v: unknown) => {
    const d = asDict(v);
    return d.cloudInitNoCloud
      ? { ...d, cloudInitNoCloud: { ...asDict(d.cloudInitNoCloud), networkDataSecretRef: { name: secret } } }
      : d;
  });
  return vm;
}

async function rolledBack(tx: CreateTransaction, err: unknown, target: string): Promise<CorralError> {
  const leftovers = await tx.rollback();
  const code = err instanceof CorralError ? err.code : 'BAD_GATEWAY';
  const tail = leftovers.length
    ? `; rollback could not remove: ${leftovers.join(', ')} — delete them by label corral.dev/vm`
    : tx.created.length
      ? '; everything created so far was removed again'
      : '';
  return new CorralError(code, `creating VM ${target} failed: ${describeError(err)}${tail}`, { cause: err });
}

/** bootc: build the disk with a cluster Job, then create the VM on it. Runs in the background as its task. */
async function buildBootcVm(
  deps: DomainDeps,
  input: VmCreateInput,
  namespace: string,
  plan: Plan,
  task: TaskHandle,
): Promise<void> {
  const target = `${namespace}/${input.name}`;
  const tx = new CreateTransaction(deps, task);
  try {
    await ensureNamespace(deps, namespace, task);
    for (const dv of plan.dataVolumes) await tx.create('DataVolume', dv);
    const bootc = plan.bootc;
    if (!bootc) throw new Error('internal: bootc plan without an image');
    const job = await tx.create(
      'Job',
      buildBootcJob(input.name, namespace, bootc.image, bootc.diskClaim, input.sshKey),
    );
    task.log(`building ${bootc.image} into ${bootc.diskClaim}`);
    task.progress(10);
    await waitForJob(deps, namespace, job.metadata.name ?? '', task);
    task.progress(80);
    // The SSH key went into the image build; cloud-init only when the caller gave user data.
    const userData = composeUserData(input.cloudInit, undefined, undefined);
    let cloudInitSecret: string | undefined;
    if (userData !== undefined)
      cloudInitSecret = (await tx.create('Secret', buildCloudInitSecret(input.name, namespace, userData))).metadata
        .name;
    await tx.create('VirtualMachine', buildVirtualMachine({ ...plan.shape, cloudInitSecret }));
    task.done(`VM ${target} created from ${bootc.image}`);
  } catch (err) {
    task.fail(await rolledBack(tx, err, target));
  }
}

async function waitForJob(deps: DomainDeps, namespace: string, name: string, task: TaskHandle): Promise<void> {
  const deadline = Date.now() + deps.config.waitTimeoutMs;
  let lastLog = '';
  while (Date.now() < deadline) {
    const job = await deps.cluster.fetch('Job', namespace, name);
    if (!job) throw new CorralError('NOT_FOUND', `build Job ${namespace}/${name} disappeared`);
    const status = asDict(job.status);
    const conditions = Array.isArray(status.conditions) ? status.conditions.map(asDict) : [];
    if (conditions.some((c) => c.type === 'Complete' && c.status === 'True') || Number(status.succeeded ?? 0) > 0) {
      task.log('build finished');
      return;
    }
    const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
    if (failed || Number(status.failed ?? 0) > 0) {
      throw new CorralError(
        'BAD_GATEWAY',
        `bootc build Job ${name} failed: ${String(failed?.message ?? 'see the Job pod log')}`,
      );
    }
    const line = Number(status.active ?? 0) > 0 ? 'build running' : 'build pending';
    if (line !== lastLog) task.log((lastLog = line));
    await sleep(deps.config.pollMs);
  }
  throw new CorralError(
    'TIMEOUT',
    `bootc build Job ${namespace}/${name} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
  );
}
