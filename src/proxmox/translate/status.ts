/**
 * KubeVirt's printableStatus in Proxmox's vocabulary. PVE's `status` is `running` or `stopped` (a paused guest
 * is `running` with `qmpstatus: paused`, as in real PVE — bpg and Ansible treat `status == running` as
 * "started"); `qmpstatus` carries the finer state and is always present because the Ansible inventory plugin
 * reads it unconditionally.
 */
export type PveStatus = 'running' | 'stopped';
export type QmpStatus = 'running' | 'paused' | 'stopped' | 'prelaunch' | 'shutdown' | 'inmigrate' | 'postmigrate';

export interface PveState {
  status: PveStatus;
  qmpstatus: QmpStatus;
  /** PVE's `lock` while a state change is under way. */
  lock?: 'migrate' | 'create' | 'rollback' | 'clone' | 'snapshot' | 'snapshot-delete';
}

export function pveState(printableStatus: string): PveState {
  switch (printableStatus) {
    case 'Running':
      return { status: 'running', qmpstatus: 'running' };
    case 'Paused':
      return { status: 'running', qmpstatus: 'paused' };
    case 'Migrating':
      return { status: 'running', qmpstatus: 'running', lock: 'migrate' };
    case 'Stopping':
    case 'Terminating':
      return { status: 'running', qmpstatus: 'shutdown' };
    case 'Starting':
      return { status: 'stopped', qmpstatus: 'prelaunch' };
    case 'Provisioning':
    case 'WaitingForVolumeBinding':
      return { status: 'stopped', qmpstatus: 'prelaunch', lock: 'create' };
    default:
      // Stopped, ErrorUnschedulable, CrashLoopBackOff, ErrorDataVolumeNotFound, Unknown…: no guest is running.
      return { status: 'stopped', qmpstatus: 'stopped' };
  }
}
