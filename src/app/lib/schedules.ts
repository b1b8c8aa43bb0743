// The schedule form's rules and wording, kept apart from the React code so they are unit-tested. The cron grammar is
// the same small library the server validates with and the embedded cluster's CronJob controller fires on.
import { cronProblem } from '../../lib/cron';
import type { ScheduleRow } from '@/server/schemas/schedules';

export type ScheduleType = ScheduleRow['type'];
export type ScheduleTarget = ScheduleRow['target'];

export const CRON_PRESETS: { cron: string; label: string }[] = [
  { cron: '0 2 * * *', label: 'Nightly at 02:00' },
  { cron: '@hourly', label: 'Every hour' },
  { cron: '0 3 * * 0', label: 'Weekly, Sunday 03:00' },
  { cron: '0 19 * * 1-5', label: 'Weekdays at 19:00' },
  { cron: '0 7 * * 1-5', label: 'Weekdays at 07:00' },
];

export interface ScheduleForm {
  name: string;
  type: ScheduleType;
  cron: string;
  enabled: boolean;
  targetKind: 'vm' | 'tag';
  /** `namespace/name` of the VM. */
  vm: string;
  tag: string;
  keep: string;
  action: 'start' | 'stop';
  description: string;
}

export function emptyForm(type: ScheduleType, vm?: { namespace: string; name: string }): ScheduleForm {
  return {
    name: '',
    type,
    cron: '0 2 * * *',
    enabled: true,
    targetKind: vm ? 'vm' : 'tag',
    vm: vm ? `${vm.namespace}/${vm.name}` : '',
    tag: '',
    keep: '7',
    action: 'stop',
    description: '',
  };
}

export function formOf(row: ScheduleRow): ScheduleForm {
  return {
    name: row.name,
    type: row.type,
    cron: row.cron,
    enabled: row.enabled,
    targetKind: row.target.kind,
    vm: row.target.kind === 'vm' ? `${row.target.namespace}/${row.target.name}` : '',
    tag: row.target.kind === 'tag' ? row.target.tag : '',
    keep: String(row.keep ?? 7),
    action: row.action ?? 'stop',
    description: row.description ?? '',
  };
}

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TAG_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** What is wrong with the form, field first (the server says the same in its 400). */
export function formProblem(f: ScheduleForm): string | null {
  if (!f.name) return 'Name: required';
  if (f.name.length > 40 || !NAME_RE.test(f.name)) return 'Name: lower-case letters, digits and - (at most 40)';
  const cron = cronProblem(f.cron);
  if (cron) return `When: ${cron}`;
  if (f.targetKind === 'vm' && !f.vm) return 'VM: pick one';
  if (f.targetKind === 'tag' && !TAG_RE.test(f.tag)) return 'Tag: letters, digits, -, _ or . (e.g. prod)';
  if (f.type === 'snapshot') {
    const keep = Number(f.keep);
    if (!/^\d+$/.test(f.keep) || keep < 1 || keep > 100) return 'Keep: a whole number from 1 to 100';
  }
  return null;
}

export function targetOf(f: ScheduleForm): ScheduleTarget {
  if (f.targetKind === 'tag') return { kind: 'tag', tag: f.tag };
  const [namespace = '', name = ''] = f.vm.split('/');
  return { kind: 'vm', namespace, name };
}

export function targetText(t: ScheduleTarget): string {
  return t.kind === 'vm' ? `VM ${t.namespace}/${t.name}` : `tag ${t.tag}`;
}

/** "snapshot, keep 7" / "stop". */
export function whatText(row: Pick<ScheduleRow, 'type' | 'keep' | 'action'>): string {
  return row.type === 'snapshot' ? `snapshot, keep ${row.keep ?? 7}` : (row.action ?? 'stop');
}

export function cronText(cron: string): string {
  return CRON_PRESETS.find((p) => p.cron === cron)?.label ?? cron;
}
