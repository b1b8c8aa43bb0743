import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { patchVmFrom } from './vm-patch';

const vm = (rv: string, spec: Record<string, unknown> = { runStrategy: 'Always' }, status = 'Running'): KObject => ({
  metadata: { name: 'web', namespace: 'tailvm', resourceVersion: rv, annotations: { a: '1' } },
  spec,
  status: { printableStatus: status },
});

/** A cluster whose VM is at `current`: a patch under another resourceVersion is the apiserver's 409. */
function cluster(current: () => KObject) {
  const sent: string[] = [];
  const deps = {
    cluster: {
      patch: (_k: string, _ns: string, _n: string, body: { metadata: { resourceVersion?: string } }) => {
        sent.push(body.metadata.resourceVersion ?? '');
        if (body.metadata.resourceVersion !== current().metadata.resourceVersion)
          return Promise.reject(new CorralError('CONFLICT', 'the object has been modified'));
        return Promise.resolve(current());
      },
      fetch: () => Promise.resolve(current()),
    },
  } as unknown as DomainDeps;
  return { deps, sent };
}

describe('patchVmFrom', () => {
  it('goes again under the new resourceVersion when only the status moved on', async () => {
    const { deps, sent } = cluster(() => vm('7', undefined, 'Starting'));
    await patchVmFrom(deps, vm('5'), { metadata: { annotations: { b: '2' } } });
    expect(sent).toEqual(['5', '7']);
  });

  it('keeps the conflict when the spec changed since the change was computed', async () => {
    const { deps, sent } = cluster(() => vm('7', { runStrategy: 'Halted' }));
    await expect(patchVmFrom(deps, vm('5'), { metadata: {} })).rejects.toThrow(/modified/);
    expect(sent).toEqual(['5']);
  });
});
