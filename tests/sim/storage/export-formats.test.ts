/**
 * The formats an export offers follow what the volume holds, as in KubeVirt: a plain filesystem claim (a CT's, no
 * CDI content type) only as `dir` and `tar.gz`; a claim CDI marked kubevirt, one a kubevirt DataVolume controls and
 * a block claim as `raw` and `gzip`; an archive DataVolume's claim as files again. The `tar.gz` is the claim's tree
 * as `tar c .` writes it, streamed without a length; `dir` is Go's FileServer over it.
 */
import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewObject } from '@/sim/store/types';
import { CDI_ANN, S } from '@/sim/storage/keys';
import { readTar } from '@/sim/storage/tar';
import { exportClaim, formatsOf, NS, phaseOf, pvc, startServedHarness, waitFor, type ServedHarness } from './harness';

let h: ServedHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function bound(claim: NewObject): Promise<void> {
  h!.store.create(S.pvcs, claim);
  await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, claim.metadata.name!)) === 'Bound');
}

function dataVolume(name: string, contentType?: string): NewObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name, namespace: NS },
    spec: {
      ...(contentType ? { contentType } : {}),
      source: { blank: {} },
      storage: { resources: { requests: { storage: '1Gi' } } },
    },
  };
}

const get = (url: string, token: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { 'x-kubevirt-export-token': token } });

describe('export formats by content', () => {
  it("a plain PVC (a CT's claim) offers only dir and tar.gz: its tree, the same on every read", async () => {
    h = await startServedHarness();
    await bound(pvc('box-data', '1Gi'));
    const { exp, token } = await exportClaim(h, 'box-data');
    const at = `${h.base}/sim-export/${NS}/box-data-export/volumes/box-data`;
    expect(formatsOf(exp, 'box-data')).toEqual({ dir: `${at}/dir`, 'tar.gz': `${at}/disk.tar.gz` });
    expect((await get(`${at}/disk.img`, token)).status).toBe(404);
    expect((await get(`${at}/disk.img.gz`, token)).status).toBe(404);
    expect((await fetch(`${at}/disk.tar.gz`)).status).toBe(401);

    const res = await get(`${at}/disk.tar.gz`, token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('content-length')).toBeNull();
    const tar = gunzipSync(Buffer.from(await res.arrayBuffer()));
    // GNU tar reads it, names as `tar c .` writes them.
    expect(execFileSync('tar', ['-tf', '-'], { input: tar }).toString().trim().split('\n')).toEqual([
      './',
      './etc/',
      './etc/hostname',
      './etc/motd',
      './root/',
      './root/seed.bin',
      './var/',
      './var/log/',
      './var/log/boot.log',
    ]);
    const files = new Map(readTar(tar).map((e) => [e.path, e]));
    expect(files.get('etc/hostname')?.data.toString()).toBe('box-data\n');
    expect(files.get('etc/motd')?.data.toString()).toContain(`volume ${NS}/box-data`);
    expect(files.get('root/seed.bin')).toMatchObject({ size: 4096, mode: 0o600 });
    const again = gunzipSync(Buffer.from(await (await get(`${at}/disk.tar.gz`, token)).arrayBuffer()));
    expect(again.equals(tar)).toBe(true);
    expect((await get(`${at}/disk.tar.gz`, token, { method: 'HEAD' })).status).toBe(400);

    // dir: Go's FileServer — the subtree redirect, listings, files, a directory without its slash, nothing there.
    const dir = await get(`${at}/dir`, token, { redirect: 'manual' });
    expect([dir.status, dir.headers.get('location')]).toEqual([
      301,
      `/sim-export/${NS}/box-data-export/volumes/box-data/dir/`,
    ]);
    const root = await get(`${at}/dir/`, token);
    expect(root.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await root.text();
    expect(html).toContain('<a href="etc/">etc/</a>');
    expect(html).toContain('<a href="var/">var/</a>');
    const hostname = await get(`${at}/dir/etc/hostname`, token);
    expect([hostname.status, await hostname.text()]).toEqual([200, 'box-data\n']);
    const seed = Buffer.from(await (await get(`${at}/dir/root/seed.bin`, token)).arrayBuffer());
    expect(seed.equals(files.get('root/seed.bin')!.data)).toBe(true);
    const etc = await get(`${at}/dir/etc`, token, { redirect: 'manual' });
    expect([etc.status, etc.headers.get('location')]).toEqual([301, 'etc/']);
    expect((await get(`${at}/dir/etc/nope`, token)).status).toBe(404);
    expect((await get(`${at}/dir/../../x`, token)).status).toBe(404);
  });

  it('a claim marked kubevirt, one a kubevirt DataVolume controls and a block claim offer raw and gzip; archive ones files', async () => {
    h = await startServedHarness();
    const marked = pvc('marked', '1Gi');
    marked.metadata.annotations = { [CDI_ANN.contentType]: 'kubevirt' };
    await bound(marked);
    await bound(pvc('block', '1Gi', undefined, { volumeMode: 'Block' }));
    // DataVolumes' claims, then without CDI's mark: the controlling DataVolume's contentType decides.
    h.store.create(S.dataVolumes, dataVolume('owned'));
    h.store.create(S.dataVolumes, dataVolume('files', 'archive'));
    for (const name of ['owned', 'files'])
      await waitFor(`${name} Succeeded`, () => phaseOf(h!.store.get(S.dataVolumes, NS, name)) === 'Succeeded', 20_000);
    expect(h.store.get(S.pvcs, NS, 'files')?.metadata.annotations?.[CDI_ANN.contentType]).toBe('archive');
    expect(h.store.get(S.pvcs, NS, 'files')?.spec).toMatchObject({ volumeMode: 'Filesystem' });
    const unmark = (name: string) =>
      h!.store.mutate(S.pvcs, NS, name, (o) => {
        delete o.metadata.annotations![CDI_ANN.contentType];
      });
    h.store.create(S.dataVolumes, dataVolume('owned-files', 'archive'));
    await waitFor('owned-files', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'owned-files')) === 'Succeeded', 20_000);
    unmark('owned');
    unmark('owned-files');

    const exports = await Promise.all(
      ['marked', 'block', 'owned', 'files', 'owned-files'].map(
        async (name) => [name, await exportClaim(h!, name)] as const,
      ),
    );
    const offered = Object.fromEntries(exports.map(([name, { exp }]) => [name, Object.keys(formatsOf(exp, name))]));
    expect(offered).toEqual({
      marked: ['raw', 'gzip'],
      block: ['raw', 'gzip'],
      owned: ['raw', 'gzip'],
      files: ['dir', 'tar.gz'],
      'owned-files': ['dir', 'tar.gz'],
    });
    const [, block] = exports[1]!;
    expect((await get(formatsOf(block.exp, 'block').raw!, block.token)).status).toBe(200);
    expect((await get(formatsOf(block.exp, 'block').raw!.replace('disk.img', 'disk.tar.gz'), block.token)).status).toBe(
      404,
    );
  }, 30_000);

  it('an archive DataVolume on a block claim is refused, as CDI does', async () => {
    h = await startServedHarness();
    const dv = dataVolume('blocky', 'archive');
    (dv.spec as { storage: Record<string, unknown> }).storage.volumeMode = 'Block';
    h.store.create(S.dataVolumes, dv);
    await waitFor('Failed', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'blocky')) === 'Failed');
    expect(h.store.get(S.pvcs, NS, 'blocky')).toBeUndefined();
  });
});
