/**
 * The Proxmox gap log as data: every PVE endpoint an authenticated client asked for that Corral does not serve, by
 * method and path shape (`/nodes/{node}/qemu/{id}/foo` for any node and vmid), with how often, when first and last,
 * and who asked last — so an operator sees what their tools need (`GET /api/proxmox/gaps`). Memory is bounded: at
 * most `capacity` shapes are kept; further new shapes are only counted in `dropped`.
 */

export interface ProxmoxGap {
  method: string;
  /** The path shape, ids and names replaced by placeholders. */
  path: string;
  /** The first concrete path seen (long or unusual segments as `{arg}`). */
  example: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  /** The Proxmox user (or `user@realm!token`) of the latest request. */
  lastCaller: string;
}

export interface ProxmoxGapReport {
  gaps: ProxmoxGap[];
  /** Requests for shapes beyond the capacity (not itemised). */
  dropped: number;
  capacity: number;
}

const MAX_CALLER = 64;

export class ProxmoxGapRegistry {
  private readonly gaps = new Map<string, ProxmoxGap>();
  private dropped = 0;

  constructor(
    readonly capacity = 500,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records one request: `new` the first time this method + shape is seen, `dropped` when it is not itemised. */
  note(method: string, path: string, example: string, caller: string): 'new' | 'known' | 'dropped' {
    const key = `${method} ${path}`;
    const at = this.now().toISOString();
    const who = caller.replace(/[^\x20-\x7e]/g, '?').slice(0, MAX_CALLER);
    const known = this.gaps.get(key);
    if (known) {
      known.count++;
      known.lastSeen = at;
      known.lastCaller = who;
      return 'known';
    }
    if (this.gaps.size >= this.capacity) {
      this.dropped++;
      return 'dropped';
    }
    this.gaps.set(key, { method, path, example, count: 1, firstSeen: at, lastSeen: at, lastCaller: who });
    return 'new';
  }

  /** Most requested first, then most recent. */
  report(): ProxmoxGapReport {
    const gaps = [...this.gaps.values()]
      .map((g) => ({ ...g }))
      .sort((a, b) => b.count - a.count || b.lastSeen.localeCompare(a.lastSeen) || a.path.localeCompare(b.path));
    return { gaps, dropped: this.dropped, capacity: this.capacity };
  }
}
