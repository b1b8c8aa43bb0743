// Status → visual class and what a VM's state allows. KubeVirt's printableStatus is shown as is; this only
// decides the dot colour and which toolbar buttons make sense (and why the others do not).

export type StatusTone = 'running' | 'stopped' | 'paused' | 'transition' | 'error';

const TRANSITIONS = new Set([
  'starting',
  'stopping',
  'migrating',
  'provisioning',
  'terminating',
  'waitingforvolumebinding',
  'waitingforreceiver',
  'pending',
  'scheduling',
  'scheduled',
  'deleting',
]);

export function statusTone(status: string): StatusTone {
  const s = status.toLowerCase();
  if (s === 'running') return 'running';
  if (s === 'stopped' || s === 'halted' || s === '') return 'stopped';
  if (s === 'paused') return 'paused';
  if (TRANSITIONS.has(s)) return 'transition';
  return 'error';
}

export type VmAction = 'start' | 'stop' | 'restart' | 'pause' | 'unpause' | 'migrate';

export interface ActionState {
  enabled: boolean;
  /** Why the button is disabled (shown as its title); empty when enabled. */
  reason: string;
}

export interface ActionFacts {
  status: string;
  running: boolean;
  /** Undefined when unknown: the button then stays enabled and the server decides. */
  liveMigratable?: { ok: boolean; reason: string };
  otherReadyNodes: number;
}

const ok: ActionState = { enabled: true, reason: '' };
const no = (reason: string): ActionState => ({ enabled: false, reason });

export function actionState(action: VmAction, f: ActionFacts): ActionState {
  const s = f.status.toLowerCase();
  const tone = statusTone(f.status);
  switch (action) {
    case 'start':
      if (tone === 'running' || tone === 'paused') return no(`already ${s}`);
      if (f.running && tone === 'transition') return no(`already ${s}`);
      return ok;
    case 'stop':
      if (tone === 'stopped' && !f.running) return no('already stopped');
      if (s === 'stopping') return no('already stopping');
      return ok;
    case 'restart':
      if (tone !== 'running' && tone !== 'paused') return no(`not running (${f.status || 'stopped'})`);
      return ok;
    case 'pause':
      if (tone === 'paused') return no('already paused');
      if (tone !== 'running') return no(`not running (${f.status || 'stopped'})`);
      return ok;
    case 'unpause':
      if (tone !== 'paused') return no('not paused');
      return ok;
    case 'migrate':
      // A stopped VM moves offline: it is pinned to the target node, where it starts next.
      if (tone === 'stopped' && !f.running) return f.otherReadyNodes === 0 ? no('no other ready node to move to') : ok;
      if (tone !== 'running') return no(`not running (${f.status || 'stopped'})`);
      if (f.liveMigratable && !f.liveMigratable.ok) return no(`not live-migratable: ${f.liveMigratable.reason}`);
      if (f.otherReadyNodes === 0) return no('no other ready node to move to');
      return ok;
  }
}
