/**
 * A TCP proxy that behaves like a slow link for the benches: every byte in each direction goes through one shared
 * pipe of `mbit` megabits a second (all connections queue on it, as on a real link), and arrives `rttMs / 2`
 * after it has been sent through. Plain TCP, so the browser and Corral negotiate HTTP, compression and the live
 * feed exactly as they would over the real link; only the bytes are slowed.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface ThrottleProxy {
  url: string;
  /** Bytes that went through, each way. */
  bytes: { up: number; down: number };
  close: () => Promise<void>;
}

/** One direction of the link: a FIFO pipe of fixed bandwidth followed by a fixed delay. */
class Pipe {
  private freeAt = 0;
  bytes = 0;

  constructor(
    private readonly bytesPerMs: number,
    private readonly delayMs: number,
  ) {}

  /** When a chunk handed over now is through the pipe and at the far end (ms, performance.now clock). */
  arrival(length: number): number {
    const now = performance.now();
    this.freeAt = Math.max(this.freeAt, now) + length / this.bytesPerMs;
    this.bytes += length;
    return this.freeAt + this.delayMs;
  }
}

/** Forwards `from` → `to` through `pipe`, in order, holding each chunk until its arrival time. */
function forward(from: Socket, to: Socket, pipe: Pipe): void {
  let queue = Promise.resolve();
  from.on('data', (chunk: Buffer) => {
    const at = pipe.arrival(chunk.length);
    queue = queue.then(async () => {
      const wait = at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!to.destroyed) to.write(chunk);
    });
  });
  from.on('end', () => void queue.then(() => to.end()));
  from.on('error', () => to.destroy());
}

export async function startThrottleProxy(target: string, mbit: number, rttMs: number): Promise<ThrottleProxy> {
  const { hostname, port } = new URL(target);
  const bytesPerMs = (mbit * 1_000_000) / 8 / 1000;
  const up = new Pipe(bytesPerMs, rttMs / 2);
  const down = new Pipe(bytesPerMs, rttMs / 2);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    forward(client, upstream, up);
    forward(upstream, client, down);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    get bytes() {
      return { up: up.bytes, down: down.bytes };
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
