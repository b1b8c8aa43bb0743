/**
 * Standard five-field cron expressions as Kubernetes CronJobs read them (minute hour day-of-month month
 * day-of-week; lists, ranges, steps, month and weekday names, `?` for `*`, and the macros @yearly/@annually,
 * @monthly, @weekly, @daily/@midnight, @hourly), evaluated in UTC. When both day fields are restricted a day
 * matches if either does, as in cron(8) and robfig/cron. A small pure library with no imports: Corral validates
 * schedules with it and the embedded cluster's CronJob controller fires on it, the way both sides of a real
 * cluster use the same grammar.
 */

export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
  /** A day field written as `*` or `?` (it then does not widen the other day field). */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

export class CronError extends Error {}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldDef {
  label: string;
  min: number;
  max: number;
  names?: string[];
  /** First value the names map to (months start at 1). */
  nameBase?: number;
}

const FIELDS: FieldDef[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day of month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  // 7 is Sunday too, as in Vixie cron.
  { label: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

function value(text: string, f: FieldDef): number {
  const lower = text.toLowerCase();
  const named = f.names?.indexOf(lower) ?? -1;
  if (named >= 0) return named + (f.nameBase ?? 0);
  if (!/^\d+$/.test(text)) throw new CronError(`${f.label}: "${text}" is not a number`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.label}: ${n} is outside ${f.min}-${f.max}`);
  return n;
}

function field(text: string, f: FieldDef): { values: Set<number>; any: boolean } {
  const values = new Set<number>();
  let any = false;
  for (const part of text.split(',')) {
    if (part === '') throw new CronError(`${f.label}: empty list item in "${text}"`);
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) throw new CronError(`${f.label}: "${part}" has more than one step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) throw new CronError(`${f.label}: bad step "${stepText}"`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      lo = f.min;
      hi = f.label === 'day of week' ? 6 : f.max;
      if (stepText === undefined) any = true;
    } else if (range.includes('-')) {
      const [a = '', b = '', more] = range.split('-');
      if (more !== undefined) throw new CronError(`${f.label}: bad range "${range}"`);
      lo = value(a, f);
      hi = value(b, f);
      if (lo > hi) throw new CronError(`${f.label}: range ${range} runs backwards`);
    } else {
      lo = value(range, f);
      // "5/15" means from 5 to the end in steps of 15.
      hi = stepText !== undefined ? f.max : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(f.label === 'day of week' && v === 7 ? 0 : v);
  }
  return { values, any };
}

/** Parses a schedule; throws CronError naming the field that is wrong. */
export function parseCron(expression: string): CronSchedule {
  const trimmed = expression.trim();
  if (/^(TZ|CRON_TZ)=/i.test(trimmed)) throw new CronError('time zones in the schedule are not supported (UTC)');
  const text = trimmed.startsWith('@') ? MACROS[trimmed.toLowerCase()] : trimmed;
  if (text === undefined) throw new CronError(`unknown macro ${trimmed}`);
  const parts = text.split(/\s+/).filter(Boolean);
  if (parts.length !== 5)
    throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const [mi, ho, dom, mo, dow] = parts.map((p, i) => field(p, FIELDS[i]!));
  return {
    minutes: mi!.values,
    hours: ho!.values,
    daysOfMonth: dom!.values,
    months: mo!.values,
    daysOfWeek: dow!.values,
    anyDayOfMonth: dom!.any,
    anyDayOfWeek: dow!.any,
  };
}

/** Whether the expression parses; the reason when it does not. */
export function cronProblem(expression: string): string | undefined {
  try {
    parseCron(expression);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

function dayMatches(s: CronSchedule, d: Date): boolean {
  const dom = s.daysOfMonth.has(d.getUTCDate());
  const dow = s.daysOfWeek.has(d.getUTCDay());
  if (s.anyDayOfMonth || s.anyDayOfWeek) return dom && dow;
  return dom || dow;
}

/** The first minute strictly after `after` that the schedule fires at (UTC); undefined if none within 5 years. */
export function nextRun(s: CronSchedule, after: Date): Date | undefined {
  const t = new Date(after.getTime());
  t.setUTCSeconds(0, 0);
  t.setUTCMinutes(t.getUTCMinutes() + 1);
  const limit = after.getTime() + 5 * 366 * 86_400_000;
  while (t.getTime() <= limit) {
    if (!s.months.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(s, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!s.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (!s.minutes.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
      continue;
    }
    return t;
  }
  return undefined;
}

/** The latest fire time in (after, until], or undefined (what a CronJob controller starts a Job for). */
export function lastRunBetween(s: CronSchedule, after: Date, until: Date): Date | undefined {
  let last: Date | undefined;
  let cursor = after;
  // Bounded: a controller that was away longer than this many missed runs only needs the latest one.
  for (let i = 0; i < 1000; i++) {
    const next = nextRun(s, cursor);
    if (!next || next.getTime() > until.getTime()) break;
    last = next;
    cursor = next;
  }
  return last;
}
