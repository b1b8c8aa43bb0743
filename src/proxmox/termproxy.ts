/**
 * The serial console the Proxmox way: `POST …/termproxy` hands out a short-lived `PVEVNC:` ticket; the client opens
 * `…/vncwebsocket?port=…&vncticket=…` and speaks PVE's termproxy protocol on it:
 *
 *   client → `user@realm:TICKET\n`, server → `OK`; then client frames `0:LEN:DATA` (input), `1:COLS:ROWS:` (resize),
 *   `2` (ping); the server sends raw terminal output.
 *
 * The translator decodes those frames and bridges to Corral's own serial console (`/api/tty/{ns}/{name}`) through
 * the server's upgrade routing — the same entry the VNC passthrough uses — so the console gateway keeps doing the
 * admin gate, console ownership, the serial log replay and the cluster connection. Nothing here talks to the cluster.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { duplexPair, type Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { ProxmoxHandler } from './handler';

export const TERM_TICKET_LIFETIME_S = 60;
/** PVE hands out termproxy ports from 5900 up as well; the number only has to round-trip through the client. */
export const TERM_PORT = 5901;

/** The ticket's scope: PVE checks termproxy tickets against the VM's ACL path `/vms/{vmid}`. */
function termPurpose(vmid: number): string {
  return `termproxy/vms/${vmid}`;
}

export function termTicketFor(proxmox: Pick<ProxmoxHandler, 'auth'>, userid: string, vmid: number): string {
  return proxmox.auth.signer.purposeTicket('PVEVNC', userid, termPurpose(vmid));
}

export function verifyTermTicket(
  proxmox: Pick<ProxmoxHandler, 'auth'>,
  userid: string,
  vmid: number,
  ticket: string,
): boolean {
  return proxmox.auth.signer.verifyPurposeTicket('PVEVNC', userid, termPurpose(vmid), ticket, TERM_TICKET_LIFETIME_S);
}

export type TermFrame =
  { kind: 'data'; data: Buffer } | { kind: 'resize'; cols: number; rows: number } | { kind: 'ping' };

/**
 * Incremental decoder of the client → server termproxy stream. Frames may be split across or packed into WebSocket
 * messages, so bytes are buffered until a frame is complete. `LEN` counts bytes (xterm.js sends UTF-8).
 */
export class TermFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  /** Returns the complete frames in `chunk` (plus what was buffered); throws on bytes that are no termproxy frame. */
  push(chunk: Buffer): TermFrame[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const frames: TermFrame[] = [];
    for (;;) {
      const frame = this.next();
      if (!frame) return frames;
      frames.push(frame);
    }
  }

  private next(): TermFrame | null {
    const buf = this.pending;
    if (buf.length === 0) return null;
    const type = buf[0];
    if (type === 0x32 /* '2' */) {
      this.pending = buf.subarray(1);
      return { kind: 'ping' };
    }
    if (type !== 0x30 /* '0' */ && type !== 0x31 /* '1' */)
      throw new Error(`Bad termproxy frame type ${JSON.stringify(String.fromCharCode(type ?? 0))}`);
    if (buf.length < 2) return null;
    if (buf[1] !== 0x3a) throw new Error('Bad termproxy frame: expected ":" after the frame type');
    if (type === 0x30) {
      const colon = buf.indexOf(0x3a, 2);
      if (colon < 0) {
        if (buf.length > 12) throw new Error('Bad termproxy data frame: length too long');
        return null;
      }
      const lenText = buf.toString('latin1', 2, colon);
      if (!/^\d{1,9}$/.test(lenText)) throw new Error(`Bad termproxy data frame length ${JSON.stringify(lenText)}`);
      const end = colon + 1 + Number(lenText);
      if (buf.length < end) return null;
      this.pending = buf.subarray(end);
      return { kind: 'data', data: Buffer.from(buf.subarray(colon + 1, end)) };
    }
    const m = /^1:(\d{1,5}):(\d{1,5}):/.exec(buf.toString('latin1', 0, Math.min(buf.length, 16)));
    if (!m) {
      if (buf.length >= 15 || !/^1:\d*(:\d*)?$/.test(buf.toString('latin1')))
        throw new Error('Bad termproxy resize frame (want 1:COLS:ROWS:)');
      return null;
    }
    this.pending = buf.subarray(m[0].length);
    return { kind: 'resize', cols: Number(m[1]), rows: Number(m[2]) };
  }
}

/** Close codes sent to the Proxmox client. */
const POLICY = 1008;
const BAD_DATA = 1007;

function toBuffer(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** Only the caller's identity (and Origin/Host, for the gateway's cross-site check) travels to the serial console. */
const HOP_HEADERS = new Set([
  'connection',
  'upgrade',
  'content-length',
  'transfer-encoding',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'sec-websocket-accept',
]);
function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(key)) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export interface TermTarget {
  vmid: number;
  namespace: string;
  name: string;
  /** The Proxmox user the ticket was issued to (`user@realm` or `user@realm!token`). */
  userid: string;
}

/**
 * Serves the termproxy protocol on upgrades handed to `handleUpgrade`, bridging each to `/api/tty/{ns}/{name}` via
 * `forward` (the server's upgrade routing) over an in-process socket pair.
 */
export function createTermproxyTranslator(
  proxmox: Pick<ProxmoxHandler, 'auth'>,
  forward: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  // Parses the in-process upgrade request into an IncomingMessage, exactly as the real server would.
  const loopback = createServer();
  loopback.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => forward(req, socket, head));

  function openSerial(req: IncomingMessage, target: TermTarget): WebSocket {
    const [near, far] = duplexPair();
    loopback.emit('connection', far);
    const path = `/api/tty/${encodeURIComponent(target.namespace)}/${encodeURIComponent(target.name)}`;
    const ws = new WebSocket(`ws://${req.headers.host ?? 'localhost'}${path}`, {
      createConnection: () => near as Socket,
      headers: forwardedHeaders(req.headers),
      perMessageDeflate: false,
    });
    ws.binaryType = 'nodebuffer';
    return ws;
  }

  function serve(client: WebSocket, req: IncomingMessage, target: TermTarget): void {
    client.on('error', () => undefined);
    const close = (code: number, reason: string) => {
      if (client.readyState === WebSocket.OPEN) client.close(code, reason.slice(0, 120));
    };
    let login: Buffer = Buffer.alloc(0);
    let serial: WebSocket | null = null;
    const early: Buffer[] = [];
    const decoder = new TermFrameDecoder();

    const toSerial = (chunk: Buffer) => {
      let frames: TermFrame[];
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        serial?.close(1000, 'client sent a bad frame');
        return close(BAD_DATA, (err as Error).message);
      }
      // Resize means nothing to a serial line and pings only keep the socket alive: only input reaches the console.
      for (const frame of frames) if (frame.kind === 'data' && frame.data.length) serial?.send(frame.data);
    };

    client.on('message', (data) => {
      const chunk = toBuffer(data);
      if (serial) {
        if (serial.readyState === WebSocket.OPEN) toSerial(chunk);
        else early.push(chunk);
        return;
      }
      login = Buffer.concat([login, chunk]);
      const nl = login.indexOf(0x0a);
      if (nl < 0) {
        if (login.length > 4096) close(POLICY, 'permission denied - no termproxy login line');
        return;
      }
      const line = login.toString('utf8', 0, nl).replace(/\r$/, '');
      const rest = login.subarray(nl + 1);
      const sep = line.lastIndexOf(':PVEVNC:');
      const user = sep < 0 ? '' : line.slice(0, sep);
      const ticket = sep < 0 ? '' : line.slice(sep + 1);
      if (user !== target.userid || !verifyTermTicket(proxmox, user, target.vmid, ticket))
        return close(POLICY, 'permission denied - invalid termproxy ticket');
      if (rest.length) early.push(rest);
      serial = openSerial(req, target);
      const upstream = serial;
      upstream.on('open', () => {
        if (client.readyState !== WebSocket.OPEN) return upstream.close(1000, '');
        client.send('OK');
        for (const chunk of early.splice(0)) toSerial(chunk);
      });
      // Terminal output (and the serial log the gateway replays first) goes to the client byte for byte.
      upstream.on('message', (out) => {
        if (client.readyState === WebSocket.OPEN) client.send(toBuffer(out), { binary: true });
      });
      // The gateway refuses before its handshake only for a cross-site Origin (403).
      upstream.on('unexpected-response', (request, res) => {
        request.destroy();
        close(POLICY, `serial console refused (HTTP ${res.statusCode ?? 0})`);
      });
      upstream.on('error', (err) => close(1011, `serial console: ${err.message}`));
      upstream.on('close', (code, reason) =>
        close(
          code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000,
          reason.toString() || 'serial console closed',
        ),
      );
    });
    client.on('close', () => serial?.close(1000, ''));
  }

  return {
    handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: TermTarget): void {
      wss.handleUpgrade(req, socket, head, (client) => serve(client, req, target));
    },
    close(): void {
      for (const client of wss.clients) client.terminate();
      wss.close();
      loopback.close();
    },
  };
}
