/**
 * Storage: `/storage`, `/nodes/{node}/storage[/{storage}/status|content]` and the storage rows of
 * `/cluster/resources`. Sizes come from the domain's StorageClass capacity (storage-map.ts says which storage reads
 * which class); every StorageClass storage is shared, so each node reports the same figures.
 */
import {
  findStorage,
  importVolumes,
  isoVolumes,
  pveStorages,
  storageSizes,
  ISO_STORAGE,
  type PveStorage,
  type StorageSizes,
} from '../storage-map';
import { listSnippets } from '@/server/domain/vm-cloudinit';
import { corral } from '../errors';
import { ProxmoxError } from '../wire';
import { CT_TEMPLATES } from '../ct-view';
import { define, storageAcl, type EndpointContext, type Routes } from './context';
import { requireNode } from './nodes';
import { upid } from './qemu-common';
import { registerStorageUpload } from './storage-upload';

/** The storage named in the path, or PVE's error for an unknown one. */
async function requireStorage(ctx: EndpointContext): Promise<PveStorage> {
  const s = await findStorage(ctx.state.services, ctx.path.storage ?? '');
  if (!s) throw new ProxmoxError(404, `storage '${ctx.path.storage}' does not exist`);
  return s;
}

/** A storage's status as the node lists it (integers: clients decode sizes into ints). */
function storageStatus(s: PveStorage, sizes: StorageSizes | undefined) {
  return {
    storage: s.storage,
    type: s.type,
    content: s.content,
    shared: s.shared,
    active: 1,
    enabled: 1,
    total: Math.round(sizes?.total ?? 0),
    used: Math.round(sizes?.used ?? 0),
    avail: Math.round(sizes?.avail ?? 0),
  };
}

/** The storage rows of `/cluster/resources`, one per storage on each node: `disk` used, `maxdisk` total. */
export async function storageResourceRows(ctx: EndpointContext, nodes: string[]): Promise<Record<string, unknown>[]> {
  const storages = await pveStorages(ctx.state.services);
  const sizes = await storageSizes(ctx.state.services, storages);
  return nodes.flatMap((node) =>
    storages.map((s) => ({
      id: `storage/${node}/${s.storage}`,
      type: 'storage',
      storage: s.storage,
      node,
      status: 'available',
      plugintype: s.type,
      shared: s.shared,
      // PVE reports content types as a comma string; bpg decodes /cluster/resources `content` strictly, so only
      // storage rows (never requested with type=vm) carry it.
      content: s.content,
      disk: Math.round(sizes.get(s.storage)?.used ?? 0),
      maxdisk: Math.round(sizes.get(s.storage)?.total ?? 0),
    })),
  );
}

export function registerStorage(table: Routes): void {
  registerStorageUpload(table);
  define(table, 'GET', '/storage', {
    handle: async (ctx) => {
      const type = ctx.args.string('type');
      return (await pveStorages(ctx.state.services))
        .filter((s) => !type || s.type === type)
        .map((s) => ({
          storage: s.storage,
          type: s.type,
          content: s.content,
          shared: s.shared,
          digest: '',
          ...(s.storageClass ? { 'storage-class': s.storageClass } : {}),
        }));
    },
  });
  define(table, 'GET', '/storage/{storage}', {
    handle: async (ctx) => {
      const s = await requireStorage(ctx);
      return { storage: s.storage, type: s.type, content: s.content, shared: s.shared };
    },
  });
  define(table, 'GET', '/nodes/{node}/storage', {
    privilege: { name: 'Datastore.Audit', path: () => '/storage' },
    handle: async (ctx) => {
      requireNode(ctx);
      const content = ctx.args.string('content');
      const storages = (await pveStorages(ctx.state.services)).filter(
        (s) => !content || s.content.split(',').includes(content),
      );
      const sizes = await storageSizes(ctx.state.services, storages);
      return storages.map((s) => {
        const row = storageStatus(s, sizes.get(s.storage));
        return { ...row, used_fraction: row.total > 0 ? row.used / row.total : 0 };
      });
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/status', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      requireNode(ctx);
      const s = await requireStorage(ctx);
      return storageStatus(s, (await storageSizes(ctx.state.services, [s])).get(s.storage));
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/content', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      requireNode(ctx);
      const s = await requireStorage(ctx);
      const content = ctx.args.string('content');
      if (s.storage !== ISO_STORAGE) return [];
      // PVE 8.2's import content: disk images uploaded with content=import (storage-upload.ts).
      const imports =
        content && content !== 'import'
          ? []
          : importVolumes(ctx.state.services, s.storage).map((v) => ({
              volid: v.volid,
              content: 'import',
              format: v.format,
              size: v.sizeBytes,
              ctime: v.ctime,
            }));
      const isos =
        content && content !== 'iso'
          ? []
          : (await isoVolumes(ctx.state.services)).map((v) => ({
              volid: v.volid,
              content: 'iso',
              format: 'iso',
              size: v.sizeBytes ?? 0,
              ctime: v.ctime,
            }));
      // Container templates: each names a container image (ct-view.ts); a CT create pulls it, nothing is stored here.
      const templates =
        content && content !== 'vztmpl'
          ? []
          : CT_TEMPLATES.map((t) => ({
              volid: t.volid,
              content: 'vztmpl',
              format: t.volid.endsWith('.tar.xz') ? 'txz' : 'tzst',
              size: 0,
            }));
      // Cloud-init snippets (`cicustom`): the keys of Corral's snippets ConfigMap.
      const snippets =
        content && content !== 'snippets'
          ? []
          : (await corral(listSnippets(ctx.state.services.deps))).map((v) => ({
              volid: v.volid,
              content: 'snippets',
              format: 'snippet',
              size: v.size,
              ctime: v.ctime,
            }));
      return [...isos, ...imports, ...templates, ...snippets];
    },
  });
  // Deleting an uploaded import image (PVE's `imgdel`): the library's delete of its DataVolume.
  define(table, 'DELETE', '/nodes/{node}/storage/{storage}/content/{volume}', {
    privilege: { name: 'Datastore.Allocate', path: storageAcl },
    handle: async (ctx) => {
      requireNode(ctx);
      const s = await requireStorage(ctx);
      const volid = ctx.path.volume?.includes(':') ? ctx.path.volume : `${s.storage}:${ctx.path.volume ?? ''}`;
      const image = importVolumes(ctx.state.services, s.storage).find((v) => v.volid === volid);
      if (!image) throw new ProxmoxError(404, `volume '${volid}' does not exist (only import images can be deleted)`);
      const { services } = ctx.state;
      const { task } = await corral(
        services.dataVolumes.delete(
          ctx.state.caller(ctx.principal),
          services.deps.config.defaultNamespace,
          image.claim,
        ),
      );
      return upid(ctx, task);
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/content/{volume}', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      const volid = ctx.path.volume ?? '';
      const imported = importVolumes(ctx.state.services, volid.split(':')[0] ?? '').find((v) => v.volid === volid);
      if (imported) return { path: volid, format: imported.format, size: imported.sizeBytes, used: imported.sizeBytes };
      const iso = (await isoVolumes(ctx.state.services)).find((v) => v.volid === volid);
      if (!iso) throw new ProxmoxError(404, `volume '${volid}' does not exist`);
      return { path: volid, format: 'iso', size: iso.sizeBytes ?? 0, used: iso.sizeBytes ?? 0 };
    },
  });
}
