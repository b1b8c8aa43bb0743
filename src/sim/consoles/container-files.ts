/**
 * What the files of a container are in the embedded cluster: each pod (by uid) has its own writable root layer over
 * the image's read-only skeleton, gone with the pod; each PersistentVolumeClaim (by uid) has one store that outlives
 * the pods mounting it. An exec process sees the layer plus the claims its container mounts (`volumeMounts`).
 *
 * Init containers are played once per pod, at the first exec into it (their effects are only observable through
 * exec): their `sh -c` scripts run line by line over the pod's view, understanding the steps a seeding script is
 * made of — `set -e`, `[ -e X ] && exit 0` (or `test -e`), `rm -rf`, `mkdir -p`, `touch`, and the copy of the
 * image's root onto a directory, `tar -C / … -cf - . | tar -C <dir> -xpf -`. Other lines are skipped.
 *
 * How full a claim is (the kubelet's Summary API `volume[].usedBytes`) is measured from its store the way `du` would:
 * whole 4 KiB blocks per file and directory, and a seeded copy of the image root counts the skeleton's size.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { podIdentity, type GuestIdentity } from './guest-identity.js';
import { childrenOf, isDirectory } from './shell/filesystem.js';
import { FileView, newFileStore, type FileStore } from './shell/writable-fs.js';

const BLOCK = 4096;
const blocks = (bytes: number): number => Math.ceil(bytes / BLOCK) * BLOCK;

let skeleton: number | undefined;
/** The image skeleton's size on disk: a block per directory and per file. */
function skeletonBytes(): number {
  if (skeleton === undefined) {
    const walk = (path: string): number =>
      BLOCK +
      childrenOf(path, 'root').reduce((sum, child) => {
        const at = path === '/' ? `/${child}` : `${path}/${child}`;
        return sum + (isDirectory(at, 'root') ? walk(at) : BLOCK);
      }, 0);
    skeleton = walk('/');
  }
  return skeleton;
}

/** Bytes a store occupies, counted like `du`. */
export function storeBytes(store: FileStore): number {
  let total = store.dirs.size * BLOCK + store.roots.size * (skeletonBytes() - BLOCK);
  for (const text of store.files.values()) total += blocks(Buffer.byteLength(text, 'utf8'));
  return total;
}

/** Every cluster's container files, so the kubelet's stats can measure the volumes the shells wrote to. */
const perCluster = new WeakMap<ObjectStore, ContainerFiles>();

/**
 * Bytes used on a claim (by uid) mounted by the running `pod`, in the cluster behind `store`; 0 when nothing was
 * ever written to it. The pod's init containers are played first if no exec has played them yet: on a real node they
 * ran before the pod was Running, so a privileged CT's seeded root is on its volume from the start.
 */
export function claimBytesUsed(store: ObjectStore, pod: KObject, claimUid: string): number {
  const files = perCluster.get(store);
  if (!files) return 0;
  files.settle(pod);
  return files.claimBytes(claimUid);
}

const PVCS = '/persistentvolumeclaims';

interface Owned {
  namespace: string;
  name: string;
  store: FileStore;
}

interface ContainerSpec {
  name?: string;
  command?: string[];
  volumeMounts?: { name?: string; mountPath?: string }[];
}
interface PodSpec {
  containers?: ContainerSpec[];
  initContainers?: ContainerSpec[];
  volumes?: { name?: string; persistentVolumeClaim?: { claimName?: string } }[];
}

export class ContainerFiles {
  private readonly layers = new Map<string, Owned>();
  private readonly claims = new Map<string, Owned>();
  private readonly initialised = new Set<string>();

  constructor(private readonly store: ObjectStore) {
    perCluster.set(store, this);
  }

  /** Plays the pod's init containers now, unless an exec already has. */
  settle(pod: KObject): void {
    const spec = (pod.spec ?? {}) as PodSpec & { nodeName?: string };
    if (!spec.initContainers?.length || this.initialised.has(pod.metadata.uid ?? '')) return;
    const identity = podIdentity(pod, this.store.get('/nodes', undefined, spec.nodeName ?? ''));
    this.view(pod, spec.containers?.[0]?.name ?? '', () => identity);
  }

  claimBytes(claimUid: string): number {
    const entry = this.claims.get(claimUid);
    return entry ? storeBytes(entry.store) : 0;
  }

  /** The file view of `container` in `pod`, with the pod's init containers played first. */
  view(pod: KObject, container: string, identity: () => GuestIdentity): FileView {
    const spec = (pod.spec ?? {}) as PodSpec;
    const uid = pod.metadata.uid ?? '';
    if (!this.initialised.has(uid)) {
      this.initialised.add(uid);
      for (const init of spec.initContainers ?? []) runInitScript(this.build(pod, spec, init, identity), init.command);
    }
    const main = (spec.containers ?? []).find((c) => c.name === container);
    return this.build(pod, spec, main, identity);
  }

  private build(pod: KObject, spec: PodSpec, container: ContainerSpec | undefined, id: () => GuestIdentity): FileView {
    const namespace = pod.metadata.namespace ?? '';
    const root = this.owned(this.layers, pod.metadata.uid ?? '', namespace, pod.metadata.name ?? '', '/pods');
    const volumes: { at: string; store: FileStore }[] = [];
    for (const mount of container?.volumeMounts ?? []) {
      const claimName = spec.volumes?.find((v) => v.name === mount.name)?.persistentVolumeClaim?.claimName;
      const claim = claimName ? this.store.get(PVCS, namespace, claimName) : undefined;
      if (!claim?.metadata.uid || !mount.mountPath) continue;
      volumes.push({
        at: mount.mountPath.replace(/\/+$/, '') || '/',
        store: this.owned(this.claims, claim.metadata.uid, namespace, claimName!, PVCS),
      });
    }
    return FileView.container(root, volumes, id);
  }

  private owned(map: Map<string, Owned>, uid: string, namespace: string, name: string, collection: string): FileStore {
    let entry = map.get(uid);
    if (!entry) {
      // Forget the files of objects that are gone (a deleted pod's layer, a deleted claim's volume).
      for (const [key, old] of map)
        if (this.store.get(collection, old.namespace, old.name)?.metadata.uid !== key) {
          map.delete(key);
          this.initialised.delete(key);
        }
      entry = { namespace, name, store: newFileStore() };
      map.set(uid, entry);
    }
    return entry.store;
  }
}

const COPY_ROOT = /^tar -C \/ .*-cf - \. \| tar -C (\S+) -xpf -$/;

/** Plays a seeding script (see the file comment) over `view`. */
export function runInitScript(view: FileView, command: string[] | undefined): void {
  if (!command || command.length < 3 || !/(^|\/)(ba)?sh$/.test(command[0]!) || command[1] !== '-c') return;
  for (const raw of command[2]!.split('\n')) {
    const line = raw.trim();
    const guard = /^(?:\[ -e (\S+) \]|test -e (\S+)) && exit 0$/.exec(line);
    if (guard) {
      if (view.exists((guard[1] ?? guard[2])!)) return;
      continue;
    }
    const copy = COPY_ROOT.exec(line);
    if (copy) {
      view.seedRoot(copy[1]!);
      continue;
    }
    const [verb, ...rest] = line.split(/\s+/);
    const flags = rest.filter((a) => a.startsWith('-')).join('');
    const paths = rest.filter((a) => !a.startsWith('-'));
    for (const path of paths) {
      if (verb === 'rm' && view.exists(path)) view.remove(path, /[rR]/.test(flags));
      else if (verb === 'touch' && !view.exists(path)) view.write(path, '');
      else if (verb === 'mkdir') {
        let at = '';
        for (const part of path.split('/').filter(Boolean)) {
          at += `/${part}`;
          if (!view.isDir(at)) view.mkdir(at);
        }
      }
    }
  }
}
