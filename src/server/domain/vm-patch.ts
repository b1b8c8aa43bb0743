/**
 * A VM patch under the resourceVersion its change was computed from. KubeVirt's controllers write the VM's status
 * all the time (a starting VM's conditions, printableStatus), and every such write bumps the resourceVersion, so a
 * precondition on it fails although nobody touched what the change was made from. On a conflict the VM is read again:
 * when its spec and annotations are still the ones the change was computed from, the same patch goes again under the
 * new resourceVersion; when they moved on, the conflict stands (the change must be made again from the new state).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';

const ATTEMPTS = 4;

const sameBasis = (a: KObject, b: KObject) =>
  JSON.stringify(a.spec ?? {}) === JSON.stringify(b.spec ?? {}) &&
  JSON.stringify(a.metadata.annotations ?? {}) === JSON.stringify(b.metadata.annotations ?? {});

export async function patchVmFrom(
  deps: DomainDeps,
  basis: KObject,
  patch: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> },
): Promise<KObject> {
  const namespace = basis.metadata.namespace ?? '';
  const name = basis.metadata.name ?? '';
  let resourceVersion = basis.metadata.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.cluster.patch('VirtualMachine', namespace, name, {
        ...patch,
        metadata: { ...patch.metadata, resourceVersion },
      });
    } catch (err) {
      if (!(err instanceof CorralError && err.code === 'CONFLICT') || attempt >= ATTEMPTS) throw err;
      const now = await deps.cluster.fetch('VirtualMachine', namespace, name);
      if (!now || !sameBasis(now, basis)) throw err;
      resourceVersion = now.metadata.resourceVersion;
    }
  }
}
