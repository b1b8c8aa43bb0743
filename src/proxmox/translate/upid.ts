/**
 * UPIDs: `UPID:<node>:<pid 8 hex>:<pstart 8 hex>:<starttime 8 hex>:<type>:<id>:<user>:` (trailing colon), the
 * shape PVE's regex and bpg's ParseTaskID accept. Corral has no processes: `pid` carries a per-process task
 * sequence number and `pstart` the server's boot second, so a UPID names exactly one task in the journal and
 * UPIDs from an earlier server run are recognisably stale.
 */
export interface Upid {
  node: string;
  pid: number;
  pstart: number;
  starttime: number;
  type: string;
  id: string;
  user: string;
}

const UPID_RE =
  /^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$/;

function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).toUpperCase().padStart(width, '0');
}

export function formatUpid(u: Upid): string {
  if (/[:\s]/.test(u.type) || /[:\s]/.test(u.id) || /[:\s]/.test(u.user) || !u.user || !u.type)
    throw new Error(`UPID field contains ':' or whitespace or is empty: ${JSON.stringify(u)}`);
  return `UPID:${u.node}:${hex(u.pid, 8)}:${hex(u.pstart, 8)}:${hex(u.starttime, 8)}:${u.type}:${u.id}:${u.user}:`;
}

export function parseUpid(text: string): Upid | undefined {
  const m = UPID_RE.exec(text);
  if (!m) return undefined;
  return {
    node: m[1] as string,
    pid: parseInt(m[2] as string, 16),
    pstart: parseInt(m[3] as string, 16),
    starttime: parseInt(m[4] as string, 16),
    type: m[5] as string,
    id: m[6] as string,
    user: m[7] as string,
  };
}

/** A node name usable inside a UPID (PVE's node regex); Kubernetes node names with dots are cut at the first dot. */
export function upidNode(nodeName: string): string {
  const short = nodeName.split('.')[0] ?? '';
  const cleaned = short.replace(/[^a-zA-Z0-9-]/g, '-').replace(/^-+|-+$/g, '');
  return cleaned || 'corral';
}
