/**
 * Runs fuzz cases one after another against a live server and checks each answer: no 5xx, the error envelope,
 * a refusal where the case is invalid by construction, an unknown field named, and no change of the embedded
 * cluster's objects from a refused request (compared object by object before and after every request).
 */
import type { ObjectStore } from '@/sim/index';
import { addedVms, diff, snapshot, type ClusterSnapshot } from './cluster-state';
import { describeCase, describeReply, send, type FuzzCase, type FuzzReply } from './http';

export type FindingKind =
  'server-error' | 'no-answer' | 'error-shape' | 'not-refused' | 'field-not-named' | 'state-changed';

export interface Finding {
  kind: FindingKind;
  case: FuzzCase;
  status: number;
  reply: string;
  detail: string;
}

export interface SuiteChecks {
  /** Why an error answer does not have the suite's envelope, or undefined when it has. */
  errorShape(c: FuzzCase, r: FuzzReply): string | undefined;
  /** A documented non-4xx refusal (Proxmox: 501 for an endpoint that does not exist). */
  allowedRefusal?(c: FuzzCase, r: FuzzReply): boolean;
  /** The error message of an answer, for the "names the field" check. */
  message(r: FuzzReply): string;
}

export interface RunOptions {
  base: string;
  store: ObjectStore;
  checks: SuiteChecks;
  /** Delete a VM a wrongly accepted request created, so the following cases start from the same state. */
  deleteVm(namespace: string, name: string): Promise<void>;
}

export interface RunResult {
  requests: number;
  findings: Finding[];
  statuses: Record<string, number>;
  ms: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the cluster's objects stop changing (250 ms without a change, at most 4 s). */
async function quiet(store: ObjectStore): Promise<void> {
  const deadline = Date.now() + 4000;
  let last = snapshot(store);
  let stableSince = Date.now();
  while (Date.now() < deadline && Date.now() - stableSince < 250) {
    await sleep(60);
    const now = snapshot(store);
    if (diff(last, now).length) {
      last = now;
      stableSince = Date.now();
    }
  }
}

export async function runCases(cases: FuzzCase[], o: RunOptions, into?: RunResult): Promise<RunResult> {
  const result: RunResult = into ?? { requests: 0, findings: [], statuses: {}, ms: 0 };
  const started = Date.now();
  let before: ClusterSnapshot = snapshot(o.store);
  for (const c of cases) {
    const r = await send(o.base, c);
    const after = snapshot(o.store);
    const changes = diff(before, after);
    result.requests++;
    const statusKey = r.networkError ? 'none' : String(r.status);
    result.statuses[statusKey] = (result.statuses[statusKey] ?? 0) + 1;
    const add = (kind: FindingKind, detail: string) =>
      result.findings.push({ kind, case: c, status: r.status, reply: describeReply(r), detail });

    const refused =
      !r.networkError && ((r.status >= 400 && r.status < 500) || (o.checks.allowedRefusal?.(c, r) ?? false));
    if (r.networkError) add('no-answer', r.networkError);
    else {
      if (r.status >= 500 && !(o.checks.allowedRefusal?.(c, r) ?? false)) add('server-error', `status ${r.status}`);
      if (r.status >= 400) {
        const why = o.checks.errorShape(c, r);
        if (why) add('error-shape', why);
      }
      if (c.mustRefuse && !refused) add('not-refused', `expected 4xx, got ${r.status}`);
      if (c.mustName && r.status === 400 && !o.checks.message(r).includes(c.mustName))
        add('field-not-named', `400 message does not name ${JSON.stringify(c.mustName)}`);
    }
    if (changes.length && (refused || c.mustRefuse || c.method === 'GET' || r.networkError))
      add('state-changed', changes.slice(0, 6).join('; ') + (changes.length > 6 ? ` (+${changes.length - 6})` : ''));

    if (changes.length || (!refused && c.method !== 'GET')) {
      // Something was (wrongly) accepted: let controllers finish, undo what it created, and start over from there.
      await quiet(o.store);
      const settled = diff(before, snapshot(o.store));
      const added = addedVms(settled);
      for (const vm of added) await o.deleteVm(vm.namespace, vm.name);
      if (added.length) await quiet(o.store);
      before = snapshot(o.store);
    } else before = after;
  }
  result.ms += Date.now() - started;
  return result;
}

/** `kind | route | status | message` → count and first example, for a readable failure report. */
export function groupFindings(findings: Finding[], kind?: FindingKind): string {
  const groups = new Map<string, { n: number; first: Finding; strict: boolean }>();
  for (const f of findings) {
    if (kind && f.kind !== kind) continue;
    const msg = f.reply
      .replace(/\d{2,}/g, 'N')
      .replace(/fz-[\w-]+/g, 'fz-…')
      .slice(0, 90);
    const key = `${f.kind} | ${f.case.route} | ${f.status} | ${msg}`;
    const g = groups.get(key);
    if (g) {
      g.n++;
      g.strict &&= !!f.case.strictRule;
    } else groups.set(key, { n: 1, first: f, strict: !!f.case.strictRule });
  }
  return [...groups.entries()]
    .sort((a, b) => b[1].n - a[1].n)
    .map(
      ([key, g]) =>
        `  ${g.n}× ${key}${g.strict ? '  [strict-input rule]' : ''}\n     e.g. ${describeCase(g.first.case)}\n     → ${g.first.reply}\n     (${g.first.case.label}; ${g.first.detail})`,
    )
    .join('\n');
}
