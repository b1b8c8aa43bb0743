/**
 * The apiserver's own validation of the built-in policy/networking kinds Corral's deploy/ manifests create
 * (k8s.io/kubernetes pkg/apis/{policy,networking}/validation), reduced to the rules those kinds' users trip over:
 * - PodDisruptionBudget: minAvailable and maxUnavailable exclusive; each a non-negative int or a "N%" up to 100%;
 * - NetworkPolicy: policyTypes ⊆ {Ingress, Egress}; port protocols TCP/UDP/SCTP; ipBlock.cidr a valid CIDR;
 * - Ingress: defaultBackend or rules; every HTTP path has a pathType and an absolute path (Exact/Prefix) and a
 *   backend naming exactly one of service/resource, the service with a port name or number.
 * - CronJob: spec.schedule parses as cron, concurrencyPolicy Allow/Forbid/Replace, limits >= 0, name <= 52.
 * Failures are 422 Invalid with the upstream field paths and messages. Other kinds pass unchanged.
 */
import { isIP } from 'node:net';
import { invalid } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import type { KindSpec } from './kinds.js';
import { cronProblem } from '../../lib/cron.js';

interface Cause {
  field: string;
  message: string;
  reason?: string;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const show = (v: unknown) => JSON.stringify(v);
const required = (field: string, detail?: string): Cause => ({
  field,
  message: detail ? `Required value: ${detail}` : 'Required value',
  reason: 'FieldValueRequired',
});
const bad = (field: string, value: unknown, detail: string): Cause => ({
  field,
  message: `Invalid value: ${show(value)}: ${detail}`,
});
const unsupported = (field: string, value: unknown, supported: string[]): Cause => ({
  field,
  message: `Unsupported value: ${show(value)}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
  reason: 'FieldValueNotSupported',
});

function intOrPercent(field: string, v: unknown, causes: Cause[]): void {
  if (v === undefined) return;
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) causes.push(bad(field, v, 'must be greater than or equal to 0'));
    return;
  }
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  if (!m) causes.push(bad(field, v, "a valid percent string must be a numeric string followed by an ending '%'"));
  else if (Number(m[1]) > 100) causes.push(bad(field, v, 'must not be greater than 100%'));
}

function pdb(o: KObject, causes: Cause[]): void {
  const spec = obj(o.spec);
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
    causes.push(bad('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  intOrPercent('spec.minAvailable', spec.minAvailable, causes);
  intOrPercent('spec.maxUnavailable', spec.maxUnavailable, causes);
  const policy = spec.unhealthyPodEvictionPolicy;
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow')
    causes.push(unsupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
}

function validCidr(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  const [ip, bits, extra] = v.split('/');
  const family = isIP(ip ?? '');
  if (!family || extra !== undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function networkPolicy(o: KObject, causes: Cause[]): void {
  const spec = obj(o.spec);
  if (spec.podSelector === undefined) causes.push(required('spec.podSelector'));
  arr(spec.policyTypes).forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress') causes.push(unsupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress']));
  });
  for (const [dir, peers] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    arr(spec[dir]).forEach((rule, i) => {
      const r = obj(rule);
      arr(r.ports).forEach((port, j) => {
        const p = obj(port);
        if (p.protocol !== undefined && !['TCP', 'UDP', 'SCTP'].includes(p.protocol as string))
          causes.push(unsupported(`spec.${dir}[${i}].ports[${j}].protocol`, p.protocol, ['SCTP', 'TCP', 'UDP']));
      });
      arr(r[peers]).forEach((peer, j) => {
        const p = obj(peer);
        const path = `spec.${dir}[${i}].${peers}[${j}]`;
        const set = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => p[k] !== undefined);
        if (!set.length) causes.push(required(path, 'must specify a peer'));
        if (p.ipBlock !== undefined && set.length > 1)
          causes.push({ field: path, message: 'Forbidden: may not specify both ipBlock and another peer' });
        if (p.ipBlock !== undefined) {
          const cidr = obj(p.ipBlock).cidr;
          if (cidr === undefined || cidr === '') causes.push(required(`${path}.ipBlock.cidr`));
          else if (!validCidr(cidr)) causes.push(bad(`${path}.ipBlock.cidr`, cidr, 'must be a valid CIDR value'));
        }
      });
    });
  }
}

function backend(path: string, b: Json, causes: Cause[]): void {
  const service = b.service === undefined ? undefined : obj(b.service);
  if (service && b.resource !== undefined)
    causes.push({ field: path, message: 'Invalid value: "": cannot set both resource and service backends' });
  else if (!service && b.resource === undefined)
    causes.push({ field: path, message: 'Invalid value: "": resource or service backend is required' });
  if (!service) return;
  if (!service.name) causes.push(required(`${path}.service.name`));
  const port = obj(service.port);
  if (port.name !== undefined && port.number !== undefined)
    causes.push(bad(`${path}.service.port`, port, 'cannot set both port name & port number'));
  else if (!port.name && port.number === undefined)
    causes.push(bad(`${path}.service.port`, port, 'port name or number is required'));
}

function ingress(o: KObject, causes: Cause[]): void {
  const spec = obj(o.spec);
  const rules = arr(spec.rules);
  if (spec.defaultBackend === undefined && !rules.length)
    causes.push(bad('spec', spec, 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend !== undefined) backend('spec.defaultBackend', obj(spec.defaultBackend), causes);
  rules.forEach((rule, i) => {
    const http = obj(obj(rule).http);
    arr(http.paths).forEach((p, j) => {
      const path = obj(p);
      const at = `spec.rules[${i}].http.paths[${j}]`;
      if (path.pathType === undefined) causes.push(required(`${at}.pathType`, 'pathType must be specified'));
      else if (!['Exact', 'Prefix', 'ImplementationSpecific'].includes(path.pathType as string))
        causes.push(unsupported(`${at}.pathType`, path.pathType, ['Exact', 'ImplementationSpecific', 'Prefix']));
      else if (path.pathType !== 'ImplementationSpecific' && !String(path.path ?? '').startsWith('/'))
        causes.push(bad(`${at}.path`, path.path ?? '', 'must be an absolute path'));
      backend(`${at}.backend`, obj(path.backend), causes);
    });
  });
}

/** CronJob: a parseable schedule, the concurrency policy's values, a name short enough for its Jobs' names. */
function cronJob(o: KObject, causes: Cause[]): void {
  const spec = obj(o.spec);
  if (typeof spec.schedule !== 'string' || spec.schedule === '') causes.push(required('spec.schedule'));
  else {
    const problem = cronProblem(spec.schedule);
    if (problem) causes.push(bad('spec.schedule', spec.schedule, problem));
  }
  const policy = spec.concurrencyPolicy;
  if (policy !== undefined && policy !== 'Allow' && policy !== 'Forbid' && policy !== 'Replace')
    causes.push(unsupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  for (const f of ['successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds'] as const) {
    const v = spec[f];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0))
      causes.push(bad(`spec.${f}`, v, 'must be greater than or equal to 0'));
  }
  if (!obj(spec.jobTemplate).spec) causes.push(required('spec.jobTemplate.spec'));
  const name = o.metadata.name ?? '';
  if (name.length > 52) causes.push(bad('metadata.name', name, 'must be no more than 52 characters'));
}

const RULES: Record<string, (o: KObject, causes: Cause[]) => void> = {
  'batch/CronJob': cronJob,
  'policy/PodDisruptionBudget': pdb,
  'networking.k8s.io/NetworkPolicy': networkPolicy,
  'networking.k8s.io/Ingress': ingress,
};

/** Throws 422 Invalid when a body of one of these built-in kinds breaks the apiserver's validation. */
export function validateBuiltin(type: KindSpec, o: KObject): void {
  const rule = RULES[`${type.group}/${type.kind}`];
  if (!rule) return;
  const causes: Cause[] = [];
  rule(o, causes);
  if (causes.length) throw invalid(type.kind, type.group, o.metadata.name ?? '', causes);
}
