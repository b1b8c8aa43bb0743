/**
 * The Proxmox VE wire format: every answer is `{"data": ...}` with the exact content type real clients compare
 * against, and errors carry their message in the HTTP reason phrase (proxmoxer and Ansible show the reason
 * phrase, bpg/proxmox matches "does not exist" / "already exists" in it).
 */
import type { ServerResponse } from 'node:http';

/** Where the API lives on the host root; clients cannot add a path prefix. */
export const API_PREFIX = '/api2/json';

/** npm proxmox-api compares this header with `===`; no space, upper-case UTF-8. */
export const PVE_CONTENT_TYPE = 'application/json;charset=UTF-8';

/** An error that renders as a Proxmox error answer: status + reason phrase + `{data:null, message, errors?}`. */
export class ProxmoxError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Per-parameter reasons, only for `400 Parameter verification failed.` */
    readonly errors?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ProxmoxError';
  }
}

/** `400 Parameter verification failed.` with the offending parameters named, as PVE's schema validator answers. */
export function paramError(errors: Record<string, string>): ProxmoxError {
  return new ProxmoxError(400, 'Parameter verification failed.', errors);
}

/** An unknown VM, in the words bpg/proxmox recognises as "resource does not exist". */
export function vmNotFound(node: string, vmid: number | string): ProxmoxError {
  return new ProxmoxError(404, `Configuration file 'nodes/${node}/qemu-server/${vmid}.conf' does not exist`);
}

/** An unknown container (or a VM's vmid on an `lxc` path), in PVE's lxc words. */
export function ctNotFound(node: string, vmid: number | string): ProxmoxError {
  return new ProxmoxError(404, `Configuration file 'nodes/${node}/lxc/${vmid}.conf' does not exist`);
}

export function notImplemented(method: string, path: string): ProxmoxError {
  return new ProxmoxError(501, `Method '${method} ${path}' not implemented`);
}

/**
 * A reason phrase Node accepts: Node throws on CR/LF and characters outside Latin-1, so those become spaces and
 * `?`. Long messages are kept whole (clients show them), only bounded so a runaway message cannot bloat headers.
 */
export function reasonPhrase(message: string): string {
  const flat = message
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[^\x20-\x7e\xa0-\xff]/g, '?')
    .trim();
  return (flat || 'error').slice(0, 1024);
}

function writeJson(res: ServerResponse, status: number, reason: string, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, reason, {
    'Content-Type': PVE_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'max-age=0',
  });
  res.end(payload);
}

/** Success: `{"data": value}` (value `null` for synchronous writes such as `PUT …/config`). */
export function sendData(res: ServerResponse, data: unknown): void {
  writeJson(res, 200, 'OK', { data: data === undefined ? null : data });
}

/** JSON already serialized (a cached list): sent inside the envelope as is, or a whole cached envelope body. */
export class RawJson {
  constructor(
    readonly json: string,
    /** The complete encoded `{"data": …}` body, when the caller keeps one cached. */
    readonly body?: Buffer,
  ) {}
}

export function envelopeBuffer(json: string): Buffer {
  return Buffer.from(`{"data":${json}}`);
}

export function sendRawData(res: ServerResponse, raw: RawJson): void {
  const payload = raw.body ?? envelopeBuffer(raw.json);
  res.writeHead(200, 'OK', {
    'Content-Type': PVE_CONTENT_TYPE,
    'Content-Length': payload.length,
    'Cache-Control': 'max-age=0',
  });
  res.end(payload);
}

/** Any error as Proxmox renders it; unexpected exceptions become 500 with their message, never a crash. */
export function sendError(res: ServerResponse, err: unknown): void {
  const pve = toProxmoxError(err);
  const body: { data: null; message: string; errors?: Record<string, string> } = {
    data: null,
    message: `${pve.message}\n`,
  };
  if (pve.errors) body.errors = pve.errors;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeJson(res, pve.status, reasonPhrase(pve.message), body);
}

export function toProxmoxError(err: unknown): ProxmoxError {
  if (err instanceof ProxmoxError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ProxmoxError(500, message || 'internal error');
}
