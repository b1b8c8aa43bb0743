/**
 * Writable files for container shells. A `FileStore` is one file system's own content (a container's root layer,
 * or a volume); a `FileView` is what one process sees: the image's read-only skeleton at `/` with the container's
 * root layer over it, plus volumes mounted at their paths. `chroot` makes a new view rooted at a directory of the
 * old one. A directory of a store can be marked as a copy of the image root (`seedRoot`): what the seeding init
 * container of a privileged CT produces with `tar -C / … | tar -C <dir> -xpf -`.
 */
import type { GuestIdentity } from '../guest-identity.js';
import { childrenOf, fileContent, isDirectory } from './filesystem.js';

export interface FileStore {
  files: Map<string, string>;
  dirs: Set<string>;
  /** Directories holding a copy of the image's root file system. */
  roots: Set<string>;
  /** Paths of that copy deleted since (so the skeleton underneath does not show through). */
  deleted: Set<string>;
}

export const newFileStore = (): FileStore => ({
  files: new Map(),
  dirs: new Set(),
  roots: new Set(),
  deleted: new Set(),
});

interface Mount {
  /** Absolute path in the view ('/' for the root layer). */
  at: string;
  store: FileStore;
  /** Path inside the store the mount shows ('' for the store's top). */
  base: string;
  /** The root layer also shows the image skeleton underneath. */
  image: boolean;
}

const join = (a: string, b: string) => (b === '/' ? a || '/' : `${a}${b}`);

export class FileView {
  constructor(
    private readonly mounts: Mount[],
    private readonly id: () => GuestIdentity,
  ) {
    this.mounts.sort((x, y) => y.at.length - x.at.length);
  }

  static container(root: FileStore, volumes: { at: string; store: FileStore }[], id: () => GuestIdentity): FileView {
    return new FileView(
      [{ at: '/', store: root, base: '', image: true }, ...volumes.map((v) => ({ ...v, base: '', image: false }))],
      id,
    );
  }

  private locate(path: string): { mount: Mount; key: string; rel: string } {
    for (const mount of this.mounts) {
      if (mount.at === '/' || path === mount.at || path.startsWith(`${mount.at}/`)) {
        const rel = mount.at === '/' ? path : path.slice(mount.at.length) || '/';
        return { mount, key: join(mount.base, rel), rel };
      }
    }
    throw new Error('no root mount');
  }

  /** The image path a store key shows when it lies in a copy of the image root, else undefined. */
  private imagePath(mount: Mount, key: string, rel: string): string | undefined {
    if (mount.image) return rel;
    for (const root of mount.store.roots) {
      if (key === root) return '/';
      if (key.startsWith(`${root}/`)) return key.slice(root.length);
    }
    return undefined;
  }

  read(path: string): string | undefined {
    const { mount, key, rel } = this.locate(path);
    const own = mount.store.files.get(key);
    if (own !== undefined) return own;
    if (mount.store.deleted.has(key)) return undefined;
    const image = this.imagePath(mount, key, rel);
    return image === undefined ? undefined : fileContent(image, this.id());
  }

  isDir(path: string): boolean {
    if (this.mounts.some((m) => m.at === path)) return true;
    const { mount, key, rel } = this.locate(path);
    if (mount.store.dirs.has(key) || mount.store.roots.has(key)) return true;
    if (mount.store.deleted.has(key)) return false;
    const image = this.imagePath(mount, key, rel);
    return image !== undefined && isDirectory(image, 'root');
  }

  exists(path: string): boolean {
    return this.isDir(path) || this.read(path) !== undefined;
  }

  list(path: string): string[] {
    const { mount, key, rel } = this.locate(path);
    const names = new Set<string>();
    const image = this.imagePath(mount, key, rel);
    if (image !== undefined) for (const n of childrenOf(image, 'root')) names.add(n);
    const prefix = key === '/' ? '/' : `${key}/`;
    for (const k of [...mount.store.files.keys(), ...mount.store.dirs, ...mount.store.roots]) {
      if (k.startsWith(prefix) && k.length > prefix.length && !k.slice(prefix.length).includes('/'))
        names.add(k.slice(prefix.length));
    }
    for (const m of this.mounts) {
      const parent = m.at.slice(0, m.at.lastIndexOf('/')) || '/';
      if (m.at !== '/' && parent === path) names.add(m.at.slice(parent.length + (parent === '/' ? 0 : 1)));
    }
    for (const n of [...names]) if (mount.store.deleted.has(join(key === '/' ? '' : key, `/${n}`))) names.delete(n);
    return [...names].sort();
  }

  /** Writes a file; the error text when it cannot (parent missing, a directory). */
  write(path: string, text: string, append = false): string | undefined {
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    if (!this.isDir(parent)) return 'No such file or directory';
    if (this.isDir(path)) return 'Is a directory';
    const { mount, key } = this.locate(path);
    mount.store.files.set(key, (append ? (this.read(path) ?? '') : '') + text);
    mount.store.deleted.delete(key);
    return undefined;
  }

  mkdir(path: string): string | undefined {
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    if (this.exists(path)) return 'File exists';
    if (!this.isDir(parent)) return 'No such file or directory';
    const { mount, key } = this.locate(path);
    mount.store.dirs.add(key);
    mount.store.deleted.delete(key);
    return undefined;
  }

  remove(path: string, recursive: boolean): string | undefined {
    if (!this.exists(path)) return 'No such file or directory';
    if (this.isDir(path) && !recursive) return 'Is a directory';
    const { mount, key, rel } = this.locate(path);
    const under = (k: string) => k === key || k.startsWith(`${key}/`);
    for (const k of [...mount.store.files.keys()]) if (under(k)) mount.store.files.delete(k);
    for (const k of [...mount.store.dirs]) if (under(k)) mount.store.dirs.delete(k);
    for (const k of [...mount.store.roots]) if (under(k)) mount.store.roots.delete(k);
    if (this.imagePath(mount, key, rel) !== undefined) mount.store.deleted.add(key);
    return undefined;
  }

  /** Marks `path` (a directory of this view) as holding a copy of the image's root file system. */
  seedRoot(path: string): void {
    const { mount, key } = this.locate(path);
    mount.store.roots.add(key);
    mount.store.dirs.add(key);
  }

  /** The view a process gets after `chroot path`. */
  chroot(path: string): FileView {
    const { mount, key } = this.locate(path);
    const inner = this.mounts
      .filter((m) => m !== mount && (m.at === path || m.at.startsWith(`${path}/`)))
      .map((m) => ({ ...m, at: m.at.slice(path.length) || '/' }));
    return new FileView(
      [{ at: '/', store: mount.store, base: key === '/' ? '' : key, image: false }, ...inner],
      this.id,
    );
  }
}
