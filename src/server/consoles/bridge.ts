/**
 * The bridge core: relays the byte stream of a console between the browser's WebSocket and the cluster's
 * WebSocket. Frames are forwarded as they come (binary, no re-encoding, no re-chunking), with back-pressure in
 * both directions, a keep-alive on both legs, and a close on either side closing the other with a mapped code.
 */
import type { WebSocket, RawData } from 'ws';
import { CloseCode, relayableClose, truncateReason } from './close-codes.js';

/** The part of a `ws` WebSocket the bridge uses; tests pass fakes of it. */
export type BridgeSocket = Pick<
  WebSocket,
  'readyState' | 'send' | 'close' | 'terminate' | 'pause' | 'resume' | 'ping' | 'on' | 'off'
>;

export type BridgeSide = 'client' | 'upstream';

export interface BridgeEnd {
  /** Which side ended the bridge first ('bridge' when close() was called from outside). */
  initiator: BridgeSide | 'bridge';
  /** The close code/reason the initiating side gave (or the one passed to close()). */
  code: number;
  reason: string;
}

export interface BridgeOptions {
  /** Bytes sent to one side and not yet flushed before the other side is paused. */
  highWaterMark?: number;
  /** Paused side resumes once the in-flight bytes fall to this. */
  lowWaterMark?: number;
  /** Ping both legs this often; a leg that has not answered the previous ping is dropped. 0 disables. */
  keepaliveMs?: number;
  /** Bytes sent to the client before anything from upstream (the retained serial log). */
  replayToClient?: Buffer;
  /** Messages the client sent before the upstream leg was open, forwarded first (in order). */
  pendingFromClient?: Buffer[];
  /**
   * Rewrites client→upstream bytes (the read-only RFB input filter). Returns the bytes to forward (possibly
   * empty) or an Error when the stream cannot be followed, which ends the bridge.
   */
  filterClientData?: (chunk: Buffer) => Buffer | Error;
  /** Sees every chunk relayed upstream→client (the serial log capture). */
  onUpstreamData?: (chunk: Buffer) => void;
  /** Chooses what the client is told when the upstream leg closes; defaults to relaying its code and reason. */
  describeUpstreamClose?: (code: number, reason: string) => { code: number; reason: string };
  onEnd?: (end: BridgeEnd) => void;
}

export interface Bridge {
  /** Ends both legs: the client gets `code`/`reason`, upstream a normal close. */
  close(code: number, reason: string): void;
  readonly ended: boolean;
  /** Bytes relayed so far in each direction. */
  readonly stats: { clientToUpstream: number; upstreamToClient: number };
}

const OPEN = 1;
const DEFAULT_HIGH_WATER = 1024 * 1024;
const DEFAULT_LOW_WATER = 256 * 1024;
const DEFAULT_KEEPALIVE_MS = 30_000;

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * One direction of the relay. Counts bytes handed to `target.send` whose write callback has not fired yet; above
 * the high-water mark the source socket is paused (ws stops reading its TCP socket, so TCP flow control pushes
 * back on the sender) and resumed at the low-water mark. Counting callbacks rather than polling
 * `bufferedAmount` reacts at the exact moment the buffer drains.
 */
class Pipe {
  private inFlight = 0;
  private paused = false;
  bytes = 0;

  constructor(
    private readonly source: BridgeSocket,
    private readonly target: BridgeSocket,
    private readonly highWater: number,
    private readonly lowWater: number,
  ) {}

  forward(chunk: Buffer): void {
    if (chunk.length === 0 || this.target.readyState !== OPEN) return;
    this.inFlight += chunk.length;
    this.bytes += chunk.length;
    this.target.send(chunk, { binary: true }, () => {
      this.inFlight -= chunk.length;
      if (this.paused && this.inFlight <= this.lowWater) {
        this.paused = false;
        this.source.resume();
      }
    });
    if (!this.paused && this.inFlight > this.highWater) {
      this.paused = true;
      this.source.pause();
    }
  }
}

export function bridgeSockets(client: BridgeSocket, upstream: BridgeSocket, options: BridgeOptions = {}): Bridge {
  const high = options.highWaterMark ?? DEFAULT_HIGH_WATER;
  const low = Math.min(options.lowWaterMark ?? DEFAULT_LOW_WATER, high);
  const up = new Pipe(client, upstream, high, low);
  const down = new Pipe(upstream, client, high, low);
  let ended = false;
  let keepalive: NodeJS.Timeout | undefined;
  const alive: Record<BridgeSide, boolean> = { client: true, upstream: true };

  const finish = (end: BridgeEnd, toClient: { code: number; reason: string } | null, toUpstream: boolean) => {
    if (ended) return;
    ended = true;
    if (keepalive) clearInterval(keepalive);
    detach();
    // Close an open leg with a close frame, queued behind the data already sent so nothing in flight is lost;
    // only a leg that cannot take a close frame (still connecting) is cut off.
    const closeLeg = (socket: BridgeSocket, code: number, reason: string) => {
      if (socket.readyState === OPEN) socket.close(code, truncateReason(reason));
      else if (socket.readyState === 0) socket.terminate();
    };
    if (toClient) closeLeg(client, toClient.code, toClient.reason);
    if (toUpstream) closeLeg(upstream, CloseCode.normal, '');
    options.onEnd?.(end);
  };

  const onClientMessage = (data: RawData) => {
    const chunk = toBuffer(data);
    if (!options.filterClientData) return up.forward(chunk);
    const filtered = options.filterClientData(chunk);
    if (filtered instanceof Error) {
      finish(
        { initiator: 'bridge', code: CloseCode.badRequest, reason: filtered.message },
        { code: CloseCode.badRequest, reason: filtered.message },
        true,
      );
      return;
    }
    up.forward(filtered);
  };
  const onUpstreamMessage = (data: RawData) => {
    const chunk = toBuffer(data);
    options.onUpstreamData?.(chunk);
    down.forward(chunk);
  };
  const onClientClose = (code: number, reason: Buffer) => {
    finish({ initiator: 'client', code, reason: reason.toString('utf8') }, null, true);
  };
  const onUpstreamClose = (code: number, reasonBuf: Buffer) => {
    const reason = reasonBuf.toString('utf8');
    const told =
      options.describeUpstreamClose?.(code, reason) ??
      relayableClose(code, reason, 'The connection to the cluster was lost');
    finish({ initiator: 'upstream', code, reason }, told, false);
  };
  // 'error' is always followed by 'close' in ws; listening keeps an error from becoming an uncaught exception.
  const onError = () => undefined;
  const onClientPong = () => (alive.client = true);
  const onUpstreamPong = () => (alive.upstream = true);

  client.on('message', onClientMessage);
  upstream.on('message', onUpstreamMessage);
  client.on('close', onClientClose);
  upstream.on('close', onUpstreamClose);
  client.on('error', onError);
  upstream.on('error', onError);
  client.on('pong', onClientPong);
  upstream.on('pong', onUpstreamPong);

  function detach() {
    client.off('message', onClientMessage);
    upstream.off('message', onUpstreamMessage);
    client.off('close', onClientClose);
    upstream.off('close', onUpstreamClose);
    client.off('pong', onClientPong);
    upstream.off('pong', onUpstreamPong);
    // The error listeners stay: a late socket error after the close must not crash the process.
  }

  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  if (keepaliveMs > 0) {
    keepalive = setInterval(() => {
      for (const side of ['client', 'upstream'] as const) {
        if (!alive[side]) {
          const reason =
            side === 'client' ? 'The browser stopped answering pings' : 'The cluster stopped answering pings';
          finish(
            { initiator: 'bridge', code: CloseCode.keepaliveTimeout, reason },
            { code: CloseCode.keepaliveTimeout, reason },
            true,
          );
          return;
        }
      }
      alive.client = alive.upstream = false;
      client.ping();
      upstream.ping();
    }, keepaliveMs);
    keepalive.unref();
  }

  if (options.replayToClient && options.replayToClient.length > 0)
    client.send(options.replayToClient, { binary: true });
  for (const early of options.pendingFromClient ?? []) onClientMessage(early);

  return {
    close(code, reason) {
      finish({ initiator: 'bridge', code, reason }, { code, reason }, true);
    },
    get ended() {
      return ended;
    },
    get stats() {
      return { clientToUpstream: up.bytes, upstreamToClient: down.bytes };
    },
  };
}
