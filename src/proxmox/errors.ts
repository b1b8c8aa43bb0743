/**
 * Corral's error vocabulary in Proxmox's words. bpg and Ansible act on the text: "does not exist" means gone,
 * "already exists" means done, "already running" is fine for a start. Codes follow PVE: state conflicts are
 * 500 with the reason as the reason phrase, bad input 400 naming the parameter.
 */
import { CorralError } from '@/server/errors';
import { ProxmoxError, paramError } from './wire';

export function fromCorral(err: unknown, param?: string): unknown {
  if (!(err instanceof CorralError)) return err;
  switch (err.code) {
    case 'BAD_REQUEST':
      return param ? paramError({ [param]: err.message }) : new ProxmoxError(400, err.message);
    case 'FORBIDDEN':
      return new ProxmoxError(403, err.message);
    case 'NOT_FOUND':
      return new ProxmoxError(
        404,
        /does not exist/.test(err.message) ? err.message : `${err.message} - does not exist`,
      );
    case 'NOT_IMPLEMENTED':
      return new ProxmoxError(501, err.message);
    case 'UNAVAILABLE':
    case 'TIMEOUT':
      return new ProxmoxError(503, err.message);
    default:
      return new ProxmoxError(500, err.message);
  }
}

/** Await a Corral operation, rethrowing its failure as a Proxmox error. */
export async function corral<T>(op: Promise<T> | (() => Promise<T>), param?: string): Promise<T> {
  try {
    return await (typeof op === 'function' ? op() : op);
  } catch (err) {
    throw fromCorral(err, param);
  }
}

export function corralSync<T>(op: () => T, param?: string): T {
  try {
    return op();
  } catch (err) {
    throw fromCorral(err, param);
  }
}
