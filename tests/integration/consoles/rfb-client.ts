/** A minimal RFB 3.8 client over a ws WebSocket, for tests and the bench: handshake, one framebuffer update. */
import type { WebSocket } from 'ws';

/** Reads exact byte counts from a WebSocket whose frames split the stream arbitrarily. */
export class StreamReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private wake: (() => void) | null = null;
  private closed: Error | null = null;

  constructor(ws: WebSocket) {
    ws.on('message', (d: Buffer) => {
      this.chunks.push(d);
      this.size += d.length;
      this.wake?.();
    });
    ws.on('close', (code, reason) => {
      this.closed = new Error(`socket closed (${code} ${reason.toString()})`);
      this.wake?.();
    });
  }

  async read(n: number, timeoutMs = 10_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.size < n) {
      if (this.closed) throw this.closed;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} bytes (have ${this.size})`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
      this.wake = null;
    }
    const all = Buffer.concat(this.chunks);
    this.chunks = [all.subarray(n)];
    this.size = all.length - n;
    return all.subarray(0, n);
  }
}

export interface ServerInit {
  width: number;
  height: number;
  bitsPerPixel: number;
  name: string;
}

export async function rfbHandshake(ws: WebSocket, reader: StreamReader): Promise<ServerInit> {
  const version = (await reader.read(12)).toString('latin1');
  if (!/^RFB 003\.00[378]\n$/.test(version)) throw new Error(`not an RFB server: ${JSON.stringify(version)}`);
  ws.send(Buffer.from('RFB 003.008\n'));
  const count = (await reader.read(1))[0]!;
  const types = [...(await reader.read(count))];
  if (!types.includes(1)) throw new Error(`no None security type in ${types.join(',')}`);
  ws.send(Buffer.from([1]));
  const result = (await reader.read(4)).readUInt32BE(0);
  if (result !== 0) throw new Error(`security failed (${result})`);
  ws.send(Buffer.from([1])); // shared
  const init = await reader.read(24);
  const nameLength = init.readUInt32BE(20);
  const name = (await reader.read(nameLength)).toString('utf8');
  return { width: init.readUInt16BE(0), height: init.readUInt16BE(2), bitsPerPixel: init[4]!, name };
}

export function setEncodingsRaw(): Buffer {
  return Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]);
}

export function updateRequest(incremental: boolean, width: number, height: number): Buffer {
  const b = Buffer.alloc(10);
  b[0] = 3;
  b[1] = incremental ? 1 : 0;
  b.writeUInt16BE(width, 6);
  b.writeUInt16BE(height, 8);
  return b;
}

export function keyEvent(keysym: number, down: boolean): Buffer {
  const b = Buffer.alloc(8);
  b[0] = 4;
  b[1] = down ? 1 : 0;
  b.writeUInt32BE(keysym, 4);
  return b;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
  encoding: number;
  pixels: Buffer;
}

/** Reads server messages until a FramebufferUpdate (Raw/CopyRect rects only); skips Bell and ServerCutText. */
export async function readFramebufferUpdate(reader: StreamReader, bytesPerPixel: number): Promise<Rect[]> {
  for (;;) {
    const type = (await reader.read(1))[0];
    if (type === 2) continue; // Bell
    if (type === 3) {
      const head = await reader.read(7);
      await reader.read(head.readUInt32BE(3));
      continue;
    }
    if (type !== 0) throw new Error(`unexpected server message ${type}`);
    const head = await reader.read(3);
    const n = head.readUInt16BE(1);
    const rects: Rect[] = [];
    for (let i = 0; i < n; i++) {
      const r = await reader.read(12);
      const rect = {
        x: r.readUInt16BE(0),
        y: r.readUInt16BE(2),
        width: r.readUInt16BE(4),
        height: r.readUInt16BE(6),
        encoding: r.readInt32BE(8),
      };
      if (rect.encoding === 0)
        rects.push({ ...rect, pixels: await reader.read(rect.width * rect.height * bytesPerPixel) });
      else if (rect.encoding === 1) rects.push({ ...rect, pixels: await reader.read(4) });
      else throw new Error(`unexpected encoding ${rect.encoding}`);
    }
    return rects;
  }
}
