/** Which pods belong to which VMI (virt-launcher, migration targets, hot-plug attachment pods), from pod events. */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { K } from './keys.js';
import { CREATED_BY_LABEL } from './launcher-pod.js';

export class LauncherPods {
  /** VMI uid → names of its pods (the objects themselves stay in the store). */
  private readonly byVmi = new Map<string, Set<string>>();

  constructor(private readonly store: ObjectStore) {}

  load(): void {
    for (const pod of this.store.list(K.pods)) this.track(pod);
  }

  onEvent(event: StoreEvent): void {
    if (event.key !== K.pods) return;
    if (event.type === 'DELETED') this.untrack(event.object);
    else this.track(event.object);
  }

  /** Current pods of a VMI (fresh from the store, in creation order). */
  podsOf(vmi: KObject): KObject[] {
    const names = this.byVmi.get(vmi.metadata.uid);
    if (!names) return [];
    const out: KObject[] = [];
    for (const name of names) {
      const pod = this.store.get(K.pods, vmi.metadata.namespace, name);
      if (pod && pod.metadata.labels?.[CREATED_BY_LABEL] === vmi.metadata.uid) out.push(pod);
    }
    return out.sort((a, b) => (a.metadata.creationTimestamp < b.metadata.creationTimestamp ? -1 : 1));
  }

  /** The launcher pod that runs (or will run) the VMI outside any migration. */
  launcherOf(vmi: KObject): KObject | undefined {
    const active = Object.keys((vmi.status as { activePods?: Record<string, string> } | undefined)?.activePods ?? {});
    const pods = this.podsOf(vmi).filter((p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher');
    return (
      pods.find((p) => active.includes(p.metadata.uid)) ??
      pods.find((p) => !p.metadata.labels?.['kubevirt.io/migrationJobUID'])
    );
  }

  private track(pod: KObject): void {
    const uid = pod.metadata.labels?.[CREATED_BY_LABEL];
    if (!uid) return;
    const names = this.byVmi.get(uid) ?? new Set<string>();
    names.add(pod.metadata.name);
    this.byVmi.set(uid, names);
  }

  private untrack(pod: KObject): void {
    const uid = pod.metadata.labels?.[CREATED_BY_LABEL];
    if (!uid) return;
    const names = this.byVmi.get(uid);
    names?.delete(pod.metadata.name);
    if (names && names.size === 0) this.byVmi.delete(uid);
  }
}
