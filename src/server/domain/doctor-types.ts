/** The doctor's row and the helpers every area's checks share (doctor.ts runs them). */
import { CorralError, describeError } from '../errors';
import type { KObject } from './cluster-port';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export type CheckArea = 'cluster' | 'kubevirt' | 'storage' | 'network' | 'access' | 'corral';
/** Corral features a failing check turns off; the UI disables their controls and links to the check. */
export type Feature = 'snapshots' | 'hotplug' | 'expand' | 'export' | 'metrics' | 'networks' | 'imports' | 'create';

export interface CheckRow {
  /** Stable id, the `name` of `POST /api/doctor/fix`. */
  name: string;
  area: CheckArea;
  title: string;
  status: CheckStatus;
  message: string;
  fixable: boolean;
  /** What the fix will change (shown before it runs). */
  fix?: string;
  /** Where the page in docs/doctor.md explains this check. */
  docs?: string;
  /** Exact items behind the message (e.g. each missing permission). */
  details?: string[];
  /** Corral features this check's failure turns off. */
  affects?: Feature[];
}

/** A row plus the fix, when Corral can apply one: `apply` reports every change it makes through `changed`. */
export interface Finding extends CheckRow {
  apply?: (changed: (line: string) => void) => Promise<void>;
  /**
   * This warning still turns `affects` off: Corral as a whole works, but that feature does not (no metrics-server:
   * no charts; no NetworkAttachmentDefinition: no NIC to add; a class that cannot grow: no resize). Other warnings
   * (a degraded operator, a check that could not read) leave their features on.
   */
  warnTurnsOff?: boolean;
}

export const DOCS = 'docs/doctor.md';

export function docsFor(name: string): string {
  return `${DOCS}#${name}`;
}

/** A finding whose `fixable` follows from whether it carries a fix (and only while it is not ok). */
export function finding(f: Omit<Finding, 'fixable' | 'docs'> & { docs?: string }): Finding {
  const fixable = f.status !== 'ok' && f.apply !== undefined;
  const out: Finding = { ...f, fixable, docs: f.docs ?? docsFor(f.name) };
  if (!fixable) {
    delete out.apply;
    delete out.fix;
  }
  return out;
}

/** A 404 means the kind (its CRD) is not installed: "none", not an error. */
export async function listOrAbsent(read: () => Promise<KObject[]>): Promise<KObject[] | 'absent'> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof CorralError && err.code === 'NOT_FOUND') return 'absent';
    throw err;
  }
}

/** The row a check produces when the cluster would not answer what it needs to read. */
export function unreadable(
  base: Pick<CheckRow, 'name' | 'area' | 'title'> & { affects?: Feature[] },
  what: string,
  err: unknown,
): Finding {
  const forbidden = err instanceof CorralError && err.code === 'FORBIDDEN';
  return finding({
    ...base,
    status: forbidden ? 'warn' : 'fail',
    message: `could not read ${what}: ${describeError(err)}`,
  });
}
