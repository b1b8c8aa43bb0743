/**
 * KubeVirt's `vnc` and `console` subresources: validation before the upgrade (virt-api's errors), subprotocol
 * `plain.kubevirt.io`, raw binary frames with no channel byte, and one session per VMI and stream — a new
 * connection closes the previous one, which is how a viewer learns another one took over.
 *
 * Also keeps one GuestMachine per running VMI — created when the VMI starts (so its boot log streams to whoever
 * is attached) or, for a VMI that was already up, on the first connection — and drops it, closing its consoles,
 * when the VMI stops.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { SimClock } from '../clock.js';
import { recordEvent } from '../events.js';
import { removeCondition, setCondition } from '../kubevirt/objects.js';
import { appendPhaseTransition } from '../kubevirt/vmi-status.js';
import { ApiError, badRequest, conflict } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { GuestMachine } from './guest-machine.js';
import { vmiIdentity } from './guest-identity.js';
import { RfbServer } from './rfb/rfb-server.js';
import { decodeSegment, isWebSocketUpgrade, refuseUpgrade, websocketAcceptor } from './upgrade.js';

export const VMIS = 'kubevirt.io/virtualmachineinstances';
export const PLAIN_KUBEVIRT = 'plain.kubevirt.io';

const STREAM_PATH =
  /^\/apis\/subresources\.kubevirt\.io\/(?:v1|v1alpha3)\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/(vnc|console)$/;
const SCREENSHOT_PATH =
  /^\/apis\/subresources\.kubevirt\.io\/(?:v1|v1alpha3)\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/vnc\/screenshot$/;

/** Close sent to the previous viewer when a new connection to the same VMI console arrives. */
export const TAKEOVER_CLOSE = { code: 1000, reason: 'replaced by a new connection to the same console' } as const;
/** Close sent to viewers when the VMI migrates to another node (the guest keeps running; reconnect). */
export const MIGRATED_CLOSE = { code: 1000, reason: 'VMI migrated to another node' } as const;
/** Close sent to viewers when the VMI stops. */
export const VMI_STOPPED_CLOSE = { code: 1000, reason: 'VMI is not running' } as const;

export type StreamKind = 'vnc' | 'console';

const FINAL_PHASES = new Set(['Succeeded', 'Failed']);

interface RunningGuest {
  uid: string;
  machine: GuestMachine;
  /** The node whose virt-handler serves the consoles; a change means the VMI migrated. */
  node: string | undefined;
}

export function matchStreamPath(pathname: string): { namespace: string; name: string; kind: StreamKind } | undefined {
  const m = STREAM_PATH.exec(pathname);
  if (!m) return undefined;
  const namespace = decodeSegment(m[1]!);
  const name = decodeSegment(m[2]!);
  return namespace && name ? { namespace, name, kind: m[3] as StreamKind } : undefined;
}

export function matchScreenshotPath(pathname: string): { namespace: string; name: string } | undefined {
  const m = SCREENSHOT_PATH.exec(pathname);
  const namespace = m && decodeSegment(m[1]!);
  const name = m && decodeSegment(m[2]!);
  return namespace && name ? { namespace, name } : undefined;
}

function phaseOf(vmi: KObject): string | undefined {
  const status = vmi.status as { phase?: unknown } | undefined;
  return typeof status?.phase === 'string' ? status.phase : undefined;
}

function devices(vmi: KObject): Record<string, unknown> {
  const spec = vmi.spec as { domain?: { devices?: Record<string, unknown> } } | undefined;
  return spec?.domain?.devices ?? {};
}

export class VmiConsoles {
  private readonly guests = new Map<string, RunningGuest>();
  private readonly sessions = new Map<string, WebSocket>();
  /** VMIs seen in a phase before Running: when they reach Running their guest boots. */
  private readonly starting = new Set<string>();
  private readonly acceptor = websocketAcceptor([PLAIN_KUBEVIRT]);
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: SimClock,
  ) {}

  start(): void {
    this.unsubscribe = this.store.subscribe((event) => this.onStoreEvent(event));
  }

  stop(): void {
    this.unsubscribe?.();
    for (const ws of this.sessions.values()) ws.close(1001, 'embedded cluster shutting down');
    this.sessions.clear();
    for (const g of this.guests.values()) g.machine.shutdown();
    this.guests.clear();
  }

  /** The VMI as validation requires for `kind`; throws the ApiError virt-api answers with. */
  validate(namespace: string, name: string, kind: StreamKind, query: URLSearchParams): KObject {
    const vmi = this.store.get(VMIS, namespace, name);
    if (!vmi) {
      // virt-api names the resource in the singular (v1.Resource("virtualmachineinstance")).
      throw new ApiError(404, 'NotFound', `virtualmachineinstance.kubevirt.io "${name}" not found`, {
        name,
        group: 'kubevirt.io',
        kind: 'virtualmachineinstance',
      });
    }
    // Same checks in the same order as virt-api's validateVMIForConsole / validateVMIForVNC.
    const phase = phaseOf(vmi);
    const dev = devices(vmi);
    if (kind === 'console') {
      if (dev.autoattachSerialConsole === false) throw badRequest('No serial consoles are present.');
      if (phase === 'Failed') throw conflict('kubevirt.io', 'virtualmachineinstance', name, 'VMI is in failed status');
    } else if (dev.autoattachGraphicsDevice === false) {
      throw badRequest('No graphics devices are present.');
    }
    if (phase !== 'Running') throw badRequest('VMI is not running');
    if (
      kind === 'vnc' &&
      query.get('preserveSession') === 'true' &&
      this.sessions.has(sessionKey('vnc', namespace, name))
    ) {
      throw new ApiError(503, 'ServiceUnavailable', 'Active VNC connection. Request denied.');
    }
    return vmi;
  }

  /**
   * The guest behind a running VMI. It boots (streaming its boot log) only when this module saw the VMI go from
   * a pending phase to Running; a VMI that was already Running when first seen (seeded fleets, a restarted
   * simulator) is a machine that has long been up and sits at its login prompt.
   */
  machineFor(vmi: KObject, boot = true): GuestMachine {
    const key = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
    const existing = this.guests.get(key);
    if (existing && existing.uid === vmi.metadata.uid) return existing.machine;
    existing?.machine.shutdown();
    const { namespace, name } = vmi.metadata;
    const uid = vmi.metadata.uid;
    const machine = new GuestMachine(
      () => vmiIdentity(this.store, this.store.get(VMIS, namespace, name) ?? vmi),
      this.clock,
      () => this.guestShutDown(namespace!, name, uid),
    );
    this.guests.set(key, { uid: vmi.metadata.uid, machine, node: nodeOf(vmi) });
    machine.setPaused(isPaused(vmi));
    if (boot) machine.boot();
    else machine.alreadyRunning();
    return machine;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    const target = matchStreamPath(url.pathname);
    if (!target)
      return refuseUpgrade(socket, new ApiError(404, 'NotFound', 'the server could not find the requested resource'));
    let vmi: KObject;
    try {
      if (!isWebSocketUpgrade(req)) throw badRequest('this subresource is only served over a WebSocket upgrade');
      vmi = this.validate(target.namespace, target.name, target.kind, url.searchParams);
    } catch (err) {
      return refuseUpgrade(socket, err);
    }
    const machine = this.machineFor(vmi, false);
    void this.acceptor
      .accept(req, socket, head)
      .then((ws) => this.attach(ws, target.kind, target.namespace, target.name, machine));
  }

  /** PNG of the VNC screen (the `vnc/screenshot` subresource). */
  screenshotOf(namespace: string, name: string): GuestMachine {
    return this.machineFor(this.validate(namespace, name, 'vnc', new URLSearchParams()), false);
  }

  private attach(ws: WebSocket, kind: StreamKind, namespace: string, name: string, machine: GuestMachine): void {
    if (this.guests.get(`${namespace}/${name}`)?.machine !== machine) {
      // The VMI stopped while the handshake was in flight.
      ws.close(VMI_STOPPED_CLOSE.code, VMI_STOPPED_CLOSE.reason);
      return;
    }
    const key = sessionKey(kind, namespace, name);
    const previous = this.sessions.get(key);
    this.sessions.set(key, ws);
    previous?.close(TAKEOVER_CLOSE.code, TAKEOVER_CLOSE.reason);
    const detach = kind === 'vnc' ? this.attachVnc(ws, machine, name) : this.attachSerial(ws, machine);
    ws.on('close', () => {
      detach();
      if (this.sessions.get(key) === ws) this.sessions.delete(key);
    });
    ws.on('error', () => ws.terminate());
  }

  private attachVnc(ws: WebSocket, machine: GuestMachine, name: string): () => void {
    const rfb = new RfbServer({
      screen: machine.screen,
      name,
      send: (data) => ws.send(data, { binary: true }),
      close: (reason) => ws.close(1002, reason.slice(0, 120)),
      onKey: (keysym, down) => machine.vncKey(keysym, down),
    });
    // KubeVirt's streamer copies only binary messages; text frames are skipped.
    ws.on('message', (data, isBinary) => {
      if (isBinary) rfb.receive(toBuffer(data));
    });
    return () => rfb.dispose();
  }

  private attachSerial(ws: WebSocket, machine: GuestMachine): () => void {
    const detach = machine.attachSerial((bytes) => ws.send(bytes, { binary: true }));
    ws.on('message', (data, isBinary) => {
      if (isBinary) machine.serialInput(toBuffer(data));
    });
    return detach;
  }

  /** What virt-handler reports when the domain shuts down from inside: the VMI Succeeded (the VM controller decides on a restart). */
  private guestShutDown(namespace: string, name: string, uid: string): void {
    let changed = false;
    const stopped = this.store.mutate(VMIS, namespace, name, (v) => {
      if (v.metadata.uid !== uid || phaseOf(v) !== 'Running') return false;
      changed = true;
      appendPhaseTransition(v, 'Succeeded');
      setCondition(v, {
        type: 'Ready',
        status: 'False',
        reason: 'PodTerminating',
        message: 'virt-launcher pod is terminating',
      });
      removeCondition(v, 'AgentConnected');
    });
    if (stopped && changed) {
      recordEvent(this.store, stopped, 'Stopped', 'The VirtualMachineInstance was shut down.', {
        component: 'virt-handler',
      });
    }
  }

  private onStoreEvent(event: StoreEvent): void {
    if (event.key !== VMIS) return;
    const vmi = event.object;
    const { namespace, name, uid } = vmi.metadata;
    const key = `${namespace}/${name}`;
    const running = event.type !== 'DELETED' && phaseOf(vmi) === 'Running';
    const guest = this.guests.get(key);
    if (running) {
      if (guest && guest.uid !== uid) this.dropGuest(key, VMI_STOPPED_CLOSE);
      // Guests are created eagerly only to stream a boot log; VMIs that were already up get one on first connect
      // (a 10 000-VM fleet costs nothing until someone opens a console).
      if (this.starting.delete(uid)) this.machineFor(vmi);
      const current = this.guests.get(key);
      if (!current) return;
      current.machine.setPaused(isPaused(vmi));
      const node = nodeOf(vmi);
      if (current.node !== undefined && node !== current.node) {
        // The console is proxied by virt-handler on the VMI's node; after a migration that stream is gone.
        this.closeSessions(namespace!, name, MIGRATED_CLOSE);
      }
      current.node = node;
      return;
    }
    if (event.type === 'DELETED' || FINAL_PHASES.has(phaseOf(vmi) ?? '')) this.starting.delete(uid);
    else this.starting.add(uid);
    if (guest) this.dropGuest(key, VMI_STOPPED_CLOSE);
  }

  private dropGuest(key: string, close: { code: number; reason: string }): void {
    const guest = this.guests.get(key);
    if (!guest) return;
    guest.machine.shutdown();
    this.guests.delete(key);
    const [namespace, name] = key.split('/') as [string, string];
    this.closeSessions(namespace, name, close);
  }

  private closeSessions(namespace: string, name: string, close: { code: number; reason: string }): void {
    for (const kind of ['vnc', 'console'] as const) {
      this.sessions.get(sessionKey(kind, namespace, name))?.close(close.code, close.reason);
    }
  }
}

function isPaused(vmi: KObject): boolean {
  const conditions =
    (vmi.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Paused' && c.status === 'True');
}

function nodeOf(vmi: KObject): string | undefined {
  const node = (vmi.status as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof node === 'string' ? node : undefined;
}

function sessionKey(kind: StreamKind, namespace: string, name: string): string {
  return `${kind}:${namespace}/${name}`;
}

function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
