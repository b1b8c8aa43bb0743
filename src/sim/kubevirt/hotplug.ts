/**
 * virt-handler's side of volume hot-plug: each hotpluggable volume on a running VMI gets an `hp-volume-xxxxx`
 * attachment pod on the VMI's node and walks volumeStatus Pending → AttachedToNode → MountedToPod → Ready
 * (3–8 s in all); a volume removed from the VMI spec loses its status entry and attachment pod.
 */
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import type { KObject } from '../store/types.js';
import { K } from './keys.js';
import { hotplugPod } from './launcher-pod.js';
import type { Json } from './objects.js';
import { digArray, digString, hash32, status } from './objects.js';
import { isHotpluggable } from './live-update.js';
import { claimOf } from './volumes.js';

export class HotplugVolumes {
  private readonly inFlight = new Set<string>();

  constructor(private readonly ctx: SimContext) {}

  reconcile(vmi: KObject): void {
    const store = this.ctx.store;
    const { namespace, name, uid } = vmi.metadata as { namespace: string; name: string; uid: string };
    const volumes = digArray(vmi, 'spec', 'volumes').filter(isHotpluggable);
    const wanted = new Set(volumes.map((v) => String(v.name)));
    const statuses = digArray(vmi, 'status', 'volumeStatus');
    const stale = statuses.filter((s) => s.hotplugVolume !== undefined && !wanted.has(String(s.name)));
    for (const entry of stale) {
      const podName = digString(entry, 'hotplugVolume', 'attachPodName');
      if (podName && store.get(K.pods, namespace, podName)) store.delete(K.pods, namespace, podName);
    }
    const missing = volumes.filter((v) => !statuses.some((s) => s.name === v.name));
    if (stale.length || missing.length) {
      store.mutate(K.vmis, namespace, name, (v) => {
        const st = status(v);
        st.volumeStatus = [
          ...digArray(st, 'volumeStatus').filter(
            (s) => !(s.hotplugVolume !== undefined && !wanted.has(String(s.name))),
          ),
          ...missing.map((vol) => ({
            name: vol.name,
            target: '',
            phase: 'Pending',
            reason: 'VolumePending',
            message: `Volume ${String(vol.name)} is pending attachment`,
            hotplugVolume: {},
          })),
        ];
      });
      return;
    }
    for (const entry of statuses) {
      if (entry.hotplugVolume === undefined || entry.phase === 'Ready') continue;
      const volumeName = String(entry.name);
      const step = `${uid}/${volumeName}/${String(entry.phase)}`;
      if (this.inFlight.has(step)) continue;
      this.inFlight.add(step);
      const delay = 1000 + (hash32(step) % 1500);
      this.ctx.clock.after(delay, () => {
        this.inFlight.delete(step);
        this.advance(namespace, name, uid, volumeName);
      });
    }
  }

  private advance(namespace: string, name: string, uid: string, volumeName: string): void {
    const store = this.ctx.store;
    const vmi = store.get(K.vmis, namespace, name);
    if (!vmi || vmi.metadata.uid !== uid || vmi.metadata.deletionTimestamp) return;
    const entry = digArray(vmi, 'status', 'volumeStatus').find((s) => s.name === volumeName);
    const volume = digArray(vmi, 'spec', 'volumes').find((v) => v.name === volumeName);
    if (!entry || !volume) return;
    let next: Json;
    switch (entry.phase) {
      case 'Pending': {
        const node = digString(vmi, 'status', 'nodeName') ?? '';
        const claim = claimOf(volume) ?? volumeName;
        const pod = store.create(K.pods, hotplugPod(vmi, node, [claim]));
        next = {
          phase: 'AttachedToNode',
          reason: 'SuccessfulCreate',
          message: `Created hotplug attachment pod ${pod.metadata.name}, for volume ${volumeName}`,
          hotplugVolume: { attachPodName: pod.metadata.name, attachPodUID: pod.metadata.uid },
        };
        break;
      }
      case 'AttachedToNode':
        next = {
          phase: 'MountedToPod',
          reason: 'VolumeMountedToPod',
          message: `Volume ${volumeName} has been mounted in virt-launcher pod`,
        };
        break;
      case 'MountedToPod': {
        const used = digArray(vmi, 'status', 'volumeStatus').filter((s) => String(s.target).startsWith('sd')).length;
        next = {
          phase: 'Ready',
          reason: 'VolumeReady',
          message: `Successfully attach hotplugged volume ${volumeName} to VM`,
          target: `sd${'abcdefghijklmnopqrstuvwxyz'[used % 26]}`,
        };
        break;
      }
      default:
        return;
    }
    const updated = store.mutate(K.vmis, namespace, name, (v) => {
      status(v).volumeStatus = digArray(v, 'status', 'volumeStatus').map((s) =>
        s.name === volumeName ? { ...s, ...next } : s,
      );
    });
    if (updated && next.phase === 'Ready')
      recordEvent(store, updated, 'VolumeReady', String(next.message), { component: 'virt-handler' });
  }
}
