/**
 * Sub-paths of a VM that no route serves. trpc-to-openapi matches `POST /vms/{ns}/{name}/frobnicate` to the
 * generic `…/{action}` route, whose enum then answers 400 "action: must be one of …"; an unknown path must be a
 * 404 like any other. The known segments are read from the procedures' own OpenAPI paths.
 */
import { VM_ACTIONS } from './schemas/vms';
import type { Meta } from './trpc';

const VM_SUB_PATH = /^\/vms\/[^/]+\/[^/]+\/([^/]+)\/?$/;

export function vmSubPathMatcher(procedures: Record<string, { _def: { meta?: Meta } }>) {
  const known = new Set<string>(VM_ACTIONS);
  for (const p of Object.values(procedures)) {
    const openapi = p._def.meta?.openapi;
    if (openapi?.method !== 'POST') continue;
    const m = /^\/vms\/\{[^}]+\}\/\{[^}]+\}\/([^/{}]+)$/.exec(openapi.path);
    if (m?.[1]) known.add(m[1].toLowerCase());
  }
  /** True for `POST /vms/{ns}/{name}/<segment>` when no route has that segment (`pathname` without /api). */
  return (method: string, pathname: string): boolean => {
    if (method !== 'POST') return false;
    const segment = VM_SUB_PATH.exec(pathname)?.[1];
    if (segment === undefined) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return true;
    }
    return !known.has(decoded.toLowerCase());
  };
}
