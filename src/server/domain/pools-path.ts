/**
 * Pool (folder) paths and member refs, the rules of ADR-0008 as pure functions. A path is `/`-separated segments of
 * `[A-Za-z0-9 _.-]`, never `.` or `..`, at most 8 deep; a ref is `backend/context/namespace/name`, so one pool can
 * hold instances of several clusters. Every check throws a BAD_REQUEST that names the field it was given.
 */
import { CorralError } from '../errors';

export const MAX_DEPTH = 8;
export const MAX_SEGMENT = 64;
/** The backend every ref of this Corral names (a Proxmox VE backend would be another). */
export const KUBEVIRT_BACKEND = 'kubevirt';

const SEGMENT = /^[A-Za-z0-9 _.-]+$/;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Why `path` is not a pool path, or undefined when it is one. */
export function pathProblem(path: string): string | undefined {
  if (path === '') return 'must not be empty';
  if (path.startsWith('/') || path.endsWith('/')) return 'must not start or end with /';
  const segments = path.split('/');
  if (segments.length > MAX_DEPTH) return `must be at most ${MAX_DEPTH} levels deep (got ${segments.length})`;
  for (const s of segments) {
    if (s === '') return 'must not contain an empty segment (//)';
    if (s === '.' || s === '..') return `must not contain a '${s}' segment`;
    if (!SEGMENT.test(s)) return `segment '${s}' may only hold letters, digits, space, '_', '.' and '-'`;
    if (s.trim() !== s) return `segment '${s}' must not start or end with a space`;
    if (s.length > MAX_SEGMENT) return `segment '${s.slice(0, 16)}…' must be at most ${MAX_SEGMENT} characters`;
  }
  return undefined;
}

export function checkPath(path: string, field = 'path'): string {
  const why = pathProblem(path);
  if (why) throw new CorralError('BAD_REQUEST', `${field}: ${why}`);
  return path;
}

export const depthOf = (path: string): number => path.split('/').length;
export const leafOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** The parent path, '' for a top-level pool. */
export const parentOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
/** True when `path` is `root` or lies under it. */
export const isWithin = (path: string, root: string): boolean => path === root || path.startsWith(`${root}/`);

/** `a/b/c` → `a`, `a/b`, `a/b/c`. */
export function ancestorsAndSelf(path: string): string[] {
  const parts = path.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Depth-first order: a parent before its children, siblings by name (so `a/b` precedes `a b`). */
export function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = (x[i] ?? '').localeCompare(y[i] ?? '');
    if (c !== 0) return c;
  }
  return x.length - y.length;
}

export interface MemberRef {
  backend: string;
  context: string;
  namespace: string;
  name: string;
}

export const formatRef = (r: MemberRef): string => `${r.backend}/${r.context}/${r.namespace}/${r.name}`;

/**
 * Parses `backend/context/namespace/name`. The context is a kubeconfig context name, which may hold almost any
 * character but a slash; namespace and name are DNS-1123 labels.
 */
export function parseRef(ref: string, field = 'ref'): MemberRef {
  const bad = (why: string) => new CorralError('BAD_REQUEST', `${field}: ${why}`);
  const parts = ref.split('/');
  if (parts.length !== 4) throw bad(`must be backend/context/namespace/name (got '${ref}')`);
  const [backend = '', context = '', namespace = '', name = ''] = parts;
  if (backend !== KUBEVIRT_BACKEND) throw bad(`backend '${backend}' is not served here (only ${KUBEVIRT_BACKEND})`);
  if (context === '' || context.length > 253) throw bad('context must be 1 to 253 characters');
  if (!DNS_LABEL.test(namespace) || namespace.length > 63)
    throw bad(`namespace '${namespace}' is not a DNS-1123 label`);
  if (!DNS_LABEL.test(name) || name.length > 63) throw bad(`name '${name}' is not a DNS-1123 label`);
  return { backend, context, namespace, name };
}

/** A ref read back from storage: malformed ones are kept as they are (shown as missing), never thrown at read time. */
export function readRef(ref: string): MemberRef | undefined {
  try {
    return parseRef(ref);
  } catch {
    return undefined;
  }
}
