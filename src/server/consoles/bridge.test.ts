import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { BridgeSocket } from './bridge.js';
import { bridgeSockets } from './bridge.js';

/** A stand-in for a ws WebSocket: records what is sent, lets the test decide when writes "flush". */
class FakeSocket extends EventEmitter {
  readyState = 1;
  sent: Buffer[] = [];
  sendOptions: unknown[] = [];
  private flushers: Array<() => void> = [];
  paused = false;
  pauseCalls = 0;
  resumeCalls = 0;
  pings = 0;
  closedWith: { code: number; reason: string } | null = null;
  terminated = false;
  autoFlush = true;

  send(data: Buffer, options: unknown, cb?: (err?: Error) => void): void {
    this.sent.push(Buffer.from(data));
    this.sendOptions.push(options);
    if (this.autoFlush) cb?.();
    else if (cb) this.flushers.push(() => cb());
  }
  flushAll(): void {
    const pending = this.flushers.splice(0);
    for (const f of pending) f();
  }
  pause(): void {
    this.paused = true;
    this.pauseCalls++;
  }
  resume(): void {
    this.paused = false;
    this.resumeCalls++;
  }
  ping(): void {
    this.pings++;
  }
  close(code?: number, reason?: string): void {
    this.closedWith = { code: code ?? 1005, reason: reason ?? '' };
    this.readyState = 2;
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }
  /** The peer closed: what ws emits once the closing handshake is done. */
  peerClose(code: number, reason = ''): void {
    this.readyState = 3;
    this.emit('close', code, Buffer.from(reason));
  }
  receive(data: Buffer | string, isBinary = true): void {
    this.emit('message', typeof data === 'string' ? Buffer.from(data) : data, isBinary);
  }
  asSocket(): BridgeSocket {
    return this as unknown as BridgeSocket;
  }
}

function pair() {
  return { client: new FakeSocket(), upstream: new FakeSocket() };
}

describe('bridgeSockets', () => {
  it('relays every byte value unchanged, as binary frames, in both directions', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0 });
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    client.receive(all);
    upstream.receive(Buffer.concat([all, all]).reverse());
    expect(Buffer.concat(upstream.sent)).toEqual(all);
    expect(Buffer.concat(client.sent)).toEqual(Buffer.concat([all, all]).reverse());
    expect(upstream.sendOptions).toEqual([{ binary: true }]);
    expect(client.sendOptions).toEqual([{ binary: true }]);
  });

  it('keeps frame boundaries and order (no re-chunking)', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0 });
    const frames = [Buffer.from('RFB 003.008\n'), Buffer.from([1]), Buffer.from([0, 0, 0, 0]), Buffer.alloc(70_000, 7)];
    for (const f of frames) upstream.receive(f);
    expect(client.sent).toEqual(frames);
  });

  it('forwards text frames from the browser as binary bytes (KubeVirt ignores text frames)', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0 });
    client.receive('ls\r', false);
    expect(upstream.sent[0]?.toString()).toBe('ls\r');
    expect(upstream.sendOptions[0]).toEqual({ binary: true });
  });

  it('client close → upstream gets a normal close and onEnd names the client', () => {
    const { client, upstream } = pair();
    const onEnd = vi.fn();
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0, onEnd });
    client.peerClose(1001, 'tab closed');
    expect(upstream.closedWith).toEqual({ code: 1000, reason: '' });
    expect(onEnd).toHaveBeenCalledWith({ initiator: 'client', code: 1001, reason: 'tab closed' });
    // Nothing crosses after the end.
    upstream.receive(Buffer.from('late'));
    expect(client.sent).toHaveLength(0);
  });

  it('upstream close → the client gets the same code and reason', () => {
    const { client, upstream } = pair();
    const onEnd = vi.fn();
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0, onEnd });
    upstream.peerClose(1000, 'VMI stopped');
    expect(client.closedWith).toEqual({ code: 1000, reason: 'VMI stopped' });
    expect(onEnd).toHaveBeenCalledWith({ initiator: 'upstream', code: 1000, reason: 'VMI stopped' });
  });

  it('closes with a close frame behind the data in flight, never cutting the socket off', () => {
    const { client, upstream } = pair();
    client.autoFlush = false; // data still queued toward the browser when the cluster closes
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0 });
    upstream.receive(Buffer.alloc(1000, 1));
    upstream.peerClose(1000, 'done');
    expect(client.closedWith).toEqual({ code: 1000, reason: 'done' });
    expect(client.terminated).toBe(false);
  });

  it('maps an abnormal upstream drop (1006) to 1011 with an explanation, and 1005 to 1000', () => {
    const a = pair();
    bridgeSockets(a.client.asSocket(), a.upstream.asSocket(), { keepaliveMs: 0 });
    a.upstream.peerClose(1006);
    expect(a.client.closedWith).toEqual({ code: 1011, reason: 'The connection to the cluster was lost' });
    const b = pair();
    bridgeSockets(b.client.asSocket(), b.upstream.asSocket(), { keepaliveMs: 0 });
    b.upstream.peerClose(1005);
    expect(b.client.closedWith).toEqual({ code: 1000, reason: '' });
  });

  it('lets the caller rewrite the upstream close (taken over)', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), {
      keepaliveMs: 0,
      describeUpstreamClose: () => ({ code: 4001, reason: 'Console taken over by bob' }),
    });
    upstream.peerClose(1000);
    expect(client.closedWith).toEqual({ code: 4001, reason: 'Console taken over by bob' });
  });

  it('pauses the sender above the high-water mark and resumes it once the receiver drained', () => {
    const { client, upstream } = pair();
    client.autoFlush = false; // the browser is slow: writes toward it stay in flight
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0, highWaterMark: 1000, lowWaterMark: 100 });
    upstream.receive(Buffer.alloc(600));
    expect(upstream.paused).toBe(false);
    upstream.receive(Buffer.alloc(600));
    expect(upstream.paused).toBe(true);
    expect(upstream.pauseCalls).toBe(1);
    upstream.receive(Buffer.alloc(600)); // already paused: no second pause
    expect(upstream.pauseCalls).toBe(1);
    client.flushAll();
    expect(upstream.paused).toBe(false);
    expect(upstream.resumeCalls).toBe(1);
    // The other direction is independent.
    expect(client.pauseCalls).toBe(0);
  });

  it('applies back-pressure toward a slow cluster too', () => {
    const { client, upstream } = pair();
    upstream.autoFlush = false;
    bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0, highWaterMark: 10, lowWaterMark: 0 });
    client.receive(Buffer.alloc(11));
    expect(client.paused).toBe(true);
    upstream.flushAll();
    expect(client.paused).toBe(false);
  });

  it('sends the replay first, then forwards early client messages, then relays', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), {
      keepaliveMs: 0,
      replayToClient: Buffer.from('old boot log'),
      pendingFromClient: [Buffer.from('a'), Buffer.from('b')],
    });
    expect(client.sent.map(String)).toEqual(['old boot log']);
    expect(upstream.sent.map(String)).toEqual(['a', 'b']);
  });

  it('feeds relayed upstream bytes to the capture hook', () => {
    const { client, upstream } = pair();
    const seen: string[] = [];
    bridgeSockets(client.asSocket(), upstream.asSocket(), {
      keepaliveMs: 0,
      onUpstreamData: (c) => seen.push(c.toString()),
    });
    upstream.receive(Buffer.from('login: '));
    expect(seen).toEqual(['login: ']);
  });

  it('ends the bridge with 4000 when the client filter cannot follow the stream', () => {
    const { client, upstream } = pair();
    bridgeSockets(client.asSocket(), upstream.asSocket(), {
      keepaliveMs: 0,
      filterClientData: () => new Error('Unknown RFB message 99'),
    });
    client.receive(Buffer.from([99]));
    expect(upstream.sent).toHaveLength(0);
    expect(client.closedWith).toEqual({ code: 4000, reason: 'Unknown RFB message 99' });
    expect(upstream.closedWith).toEqual({ code: 1000, reason: '' });
  });

  it('pings both legs and drops the bridge when one stops answering', () => {
    vi.useFakeTimers();
    try {
      const { client, upstream } = pair();
      const onEnd = vi.fn();
      bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 1000, onEnd });
      vi.advanceTimersByTime(1000);
      expect(client.pings).toBe(1);
      expect(upstream.pings).toBe(1);
      client.emit('pong');
      upstream.emit('pong');
      vi.advanceTimersByTime(1000);
      expect(onEnd).not.toHaveBeenCalled();
      expect(client.pings).toBe(2);
      client.emit('pong'); // upstream stays silent
      vi.advanceTimersByTime(1000);
      expect(onEnd).toHaveBeenCalledWith(expect.objectContaining({ initiator: 'bridge', code: 4408 }));
      expect(client.closedWith?.code).toBe(4408);
      expect(client.closedWith?.reason).toMatch(/cluster stopped answering/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('close() from outside closes both legs once', () => {
    const { client, upstream } = pair();
    const onEnd = vi.fn();
    const bridge = bridgeSockets(client.asSocket(), upstream.asSocket(), { keepaliveMs: 0, onEnd });
    bridge.close(4001, 'Console taken over by bob');
    bridge.close(1000, 'again');
    expect(client.closedWith).toEqual({ code: 4001, reason: 'Console taken over by bob' });
    expect(upstream.closedWith).toEqual({ code: 1000, reason: '' });
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(bridge.ended).toBe(true);
  });
});
