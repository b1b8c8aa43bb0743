/**
 * What a move to a Proxmox VE host (ADR-0010) needs from that host, as the domain sees it: the few calls of PVE's
 * API a cold move uses. The HTTP client (src/server/pve-client) implements it; tests may hand in their own.
 * Failures are `PveFailure`s, so the domain can tell an unreachable host from a refused token from a PVE error.
 */
import type { Readable } from 'node:stream';

export type PveFailureKind = 'unreachable' | 'unauthorized' | 'refused';

/** A failed call to a PVE host: what kind, the HTTP status (0 when it never answered) and PVE's message. */
export class PveFailure extends Error {
  constructor(
    readonly kind: PveFailureKind,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'PveFailure';
  }
}

export interface PveStorageRow {
  storage: string;
  /** Content types the storage takes (`images`, `iso`, `import`, …). */
  content: string[];
  type: string;
  active: boolean;
  /** Free bytes, when the host says. */
  avail?: number;
}

export interface PveGuestRow {
  vmid: number;
  name: string;
  node: string;
  type: string;
}

/** One configured PVE host. */
export interface PveHost {
  /** The name it is configured under (`--pve name=URL`): the move's `toContext`. */
  readonly name: string;
  /** Its API's base URL, for messages. */
  readonly url: string;
  version(): Promise<{ version: string; release: string }>;
  nodes(): Promise<{ node: string; online: boolean }[]>;
  storages(node: string): Promise<PveStorageRow[]>;
  /** Every guest (VMs and CTs) of the host's cluster: `/cluster/resources?type=vm`. */
  guests(): Promise<PveGuestRow[]>;
  /** The next free vmid (`/cluster/nextid`). */
  nextId(): Promise<number>;
  /**
   * `POST /nodes/{node}/storage/{storage}/upload` (multipart) of `bytes` bytes; answers the task's UPID. `signal`
   * stops the request at once (a cancelled move), rejecting with its reason.
   */
  upload(
    node: string,
    storage: string,
    content: 'import' | 'iso',
    filename: string,
    body: Readable,
    bytes: number,
    signal?: AbortSignal,
  ): Promise<string>;
  /** `POST /nodes/{node}/qemu`; answers the create task's UPID. */
  createVm(node: string, params: Record<string, string | number>): Promise<string>;
  /** Waits for a task to end; rejects with its exit status unless it is `OK`. */
  waitTask(node: string, upid: string, timeoutMs: number): Promise<void>;
  startVm(node: string, vmid: number): Promise<string>;
  /** `DELETE /nodes/{node}/qemu/{vmid}` with purge: the VM and its disks. */
  deleteVm(node: string, vmid: number): Promise<string>;
  /** `DELETE /nodes/{node}/storage/{storage}/content/{volid}`; answers a UPID, or '' when PVE answers none. */
  deleteVolume(node: string, storage: string, volid: string): Promise<string>;
}

/** The configured PVE hosts, in configured order. */
export interface PveHosts {
  all(): PveHost[];
  get(name: string): PveHost | undefined;
}
