/**
 * Test helpers for the consoles module: an embedded cluster with only the consoles module, objects planted in
 * its store as the KubeVirt and kubelet controllers would leave them, a byte-stream reader over a WebSocket,
 * and a minimal RFB client that decodes Raw/CopyRect updates into a framebuffer and reads text back from it.
 */
import WebSocket from 'ws';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../src/sim/index.js';
import { consolesModule } from '../../../src/sim/consoles/index.js';
import { glyphRow } from '../../../src/sim/consoles/font8x8.js';
import type { KObject } from '../../../src/sim/store/types.js';

export const NS = 'tailvm';
export const VMIS = 'kubevirt.io/virtualmachineinstances';

export async function startConsolesCluster(speed = 50): Promise<EmbeddedCluster> {
  const cluster = await startEmbeddedCluster({ fleet: 'empty', speed, modules: [consolesModule()] });
  cluster.store.create('/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
    status: { phase: 'Active' },
  });
  return cluster;
}

function timestamp(msAgo: number): string {
  return new Date(Date.now() - msAgo).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface VmiOptions {
  phase?: string;
  ip?: string;
  /** How long ago the VMI entered Running; 0 = it is booting now. */
  runningForMs?: number;
  image?: string;
  devices?: Record<string, unknown>;
}

export function plantVmi(cluster: EmbeddedCluster, name: string, options: VmiOptions = {}): KObject {
  const phase = options.phase ?? 'Running';
  return cluster.store.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: {
      domain: { devices: options.devices ?? {}, memory: { guest: '2Gi' } },
      volumes: [{ name: 'rootdisk', containerDisk: { image: options.image ?? 'quay.io/containerdisks/fedora:42' } }],
    },
    status: {
      phase,
      nodeName: 'node-1',
      phaseTransitionTimestamps:
        phase === 'Running'
          ? [{ phase: 'Running', phaseTransitionTimestamp: timestamp(options.runningForMs ?? 3_600_000) }]
          : [],
      interfaces: options.ip
        ? [
            {
              name: 'default',
              interfaceName: 'eth0',
              ipAddress: options.ip,
              ipAddresses: [options.ip],
              mac: '52:54:00:3a:7b:01',
            },
          ]
        : [],
    },
  });
}

export function setVmiPhase(cluster: EmbeddedCluster, name: string, phase: string): void {
  cluster.store.mutate(VMIS, NS, name, (vmi) => {
    (vmi.status as Record<string, unknown>).phase = phase;
  });
}

export function plantPod(cluster: EmbeddedCluster, name: string, phase = 'Running', containers = ['main']): KObject {
  return cluster.store.create('/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: phase === 'Pending' ? undefined : 'node-1',
      containers: containers.map((c) => ({ name: c, image: 'docker.io/library/debian:12' })),
    },
    status: { phase, podIP: '10.244.2.9', podIPs: [{ ip: '10.244.2.9' }], startTime: timestamp(60_000) },
  });
}

/** A WebSocket whose binary messages are read as one byte stream (message boundaries are arbitrary). */
export class StreamSocket {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary) return;
      this.buffer = Buffer.concat([this.buffer, data]);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static open(url: string, protocols: string[] = ['plain.kubevirt.io']): Promise<StreamSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, protocols);
      ws.binaryType = 'nodebuffer';
      const socket = new StreamSocket(ws);
      ws.once('open', () => resolve(socket));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          reject(
            Object.assign(new Error(`HTTP ${res.statusCode}`), {
              status: res.statusCode,
              body: JSON.parse(body) as Record<string, unknown>,
            }),
          ),
        );
      });
    });
  }

  send(data: Buffer | string): void {
    this.ws.send(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, { binary: true });
  }

  /** Exactly `n` bytes from the stream. */
  async read(n: number, timeoutMs = 15_000): Promise<Buffer> {
    await this.until(() => this.buffer.length >= n, timeoutMs, `${n} bytes`);
    const head = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return head;
  }

  /** Consume text up to and including `pattern`; returns everything consumed. */
  async readUntil(pattern: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const find = () => {
      const text = this.buffer.toString('latin1');
      if (typeof pattern === 'string') {
        const i = text.indexOf(pattern);
        return i < 0 ? -1 : i + pattern.length;
      }
      const m = pattern.exec(text);
      return m ? m.index + m[0].length : -1;
    };
    await this.until(() => find() >= 0, timeoutMs, `text ${String(pattern)}`);
    const end = find();
    const text = this.buffer.subarray(0, end).toString('latin1');
    this.buffer = this.buffer.subarray(end);
    return text;
  }

  pending(): number {
    return this.buffer.length;
  }

  waitClosed(timeoutMs = 15_000): Promise<{ code: number; reason: string }> {
    return this.until(() => this.closed !== undefined, timeoutMs, 'close').then(() => this.closed!);
  }

  close(): void {
    this.ws.close();
  }

  private until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (ready()) {
          clearTimeout(timer);
          resolve();
          return true;
        }
        if (this.closed && !what.startsWith('close')) {
          clearTimeout(timer);
          reject(
            new Error(
              `socket closed (${this.closed.code} ${this.closed.reason}) while waiting for ${what}; have ${JSON.stringify(this.buffer.toString('latin1'))}`,
            ),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `timed out waiting for ${what}; have ${JSON.stringify(this.buffer.toString('latin1').slice(-300))}`,
            ),
          ),
        timeoutMs,
      );
      if (check()) return;
      const waiter = () => {
        if (!check()) this.waiters.push(waiter);
      };
      this.waiters.push(waiter);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

export interface RfbUpdate {
  rects: { x: number; y: number; w: number; h: number; encoding: number }[];
  bytes: number;
}

/** The parts of noVNC's side of RFB the tests need: 32 bpp RGBX little-endian (what noVNC asks for). */
export class RfbTestClient {
  width = 0;
  height = 0;
  name = '';
  /** RGB per pixel, packed as 0xRRGGBB. */
  fb = new Uint32Array(0);

  constructor(readonly stream: StreamSocket) {}

  async handshake(encodings: number[] = [1, 0]): Promise<void> {
    const version = (await this.stream.read(12)).toString('latin1');
    if (version !== 'RFB 003.008\n') throw new Error(`server version ${JSON.stringify(version)}`);
    this.stream.send('RFB 003.008\n');
    const types = await this.stream.read(2);
    if (types[0] !== 1 || types[1] !== 1) throw new Error(`security types ${types.toString('hex')}`);
    this.stream.send(Buffer.from([1]));
    const result = await this.stream.read(4);
    if (result.readUInt32BE(0) !== 0) throw new Error('security result failed');
    this.stream.send(Buffer.from([1]));
    const init = await this.stream.read(24);
    this.width = init.readUInt16BE(0);
    this.height = init.readUInt16BE(2);
    this.name = (await this.stream.read(init.readUInt32BE(20))).toString('utf8');
    this.fb = new Uint32Array(this.width * this.height);
    const pf = Buffer.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);
    this.stream.send(pf);
    const enc = Buffer.alloc(4 + encodings.length * 4);
    enc.writeUInt8(2, 0);
    enc.writeUInt16BE(encodings.length, 2);
    encodings.forEach((e, i) => enc.writeInt32BE(e, 4 + i * 4));
    this.stream.send(enc);
  }

  requestUpdate(incremental: boolean, rect = { x: 0, y: 0, w: this.width, h: this.height }): void {
    const b = Buffer.alloc(10);
    b.writeUInt8(3, 0);
    b.writeUInt8(incremental ? 1 : 0, 1);
    b.writeUInt16BE(rect.x, 2);
    b.writeUInt16BE(rect.y, 4);
    b.writeUInt16BE(rect.w, 6);
    b.writeUInt16BE(rect.h, 8);
    this.stream.send(b);
  }

  key(keysym: number, down: boolean): void {
    const b = Buffer.alloc(8);
    b.writeUInt8(4, 0);
    b.writeUInt8(down ? 1 : 0, 1);
    b.writeUInt32BE(keysym, 4);
    this.stream.send(b);
  }

  type(text: string): void {
    for (const ch of text) {
      const keysym = ch === '\r' ? 0xff0d : ch.charCodeAt(0);
      this.key(keysym, true);
      this.key(keysym, false);
    }
  }

  async readUpdate(timeoutMs = 15_000): Promise<RfbUpdate> {
    const header = await this.stream.read(4, timeoutMs);
    if (header[0] !== 0) throw new Error(`expected FramebufferUpdate, got message type ${header[0]}`);
    const count = header.readUInt16BE(2);
    const update: RfbUpdate = { rects: [], bytes: 4 };
    for (let i = 0; i < count; i++) {
      const r = await this.stream.read(12, timeoutMs);
      const rect = {
        x: r.readUInt16BE(0),
        y: r.readUInt16BE(2),
        w: r.readUInt16BE(4),
        h: r.readUInt16BE(6),
        encoding: r.readInt32BE(8),
      };
      update.rects.push(rect);
      update.bytes += 12;
      if (rect.encoding === 0) {
        const pixels = await this.stream.read(rect.w * rect.h * 4, timeoutMs);
        update.bytes += pixels.length;
        for (let y = 0; y < rect.h; y++) {
          for (let x = 0; x < rect.w; x++) {
            const o = (y * rect.w + x) * 4;
            this.fb[(rect.y + y) * this.width + rect.x + x] =
              (pixels[o]! << 16) | (pixels[o + 1]! << 8) | pixels[o + 2]!;
          }
        }
      } else if (rect.encoding === 1) {
        const src = await this.stream.read(4, timeoutMs);
        update.bytes += 4;
        const sx = src.readUInt16BE(0);
        const sy = src.readUInt16BE(2);
        const copy = new Uint32Array(rect.w * rect.h);
        for (let y = 0; y < rect.h; y++)
          for (let x = 0; x < rect.w; x++) copy[y * rect.w + x] = this.fb[(sy + y) * this.width + sx + x]!;
        for (let y = 0; y < rect.h; y++)
          for (let x = 0; x < rect.w; x++) this.fb[(rect.y + y) * this.width + rect.x + x] = copy[y * rect.w + x]!;
      } else {
        throw new Error(`unexpected encoding ${rect.encoding}`);
      }
    }
    return update;
  }

  /** Read the text of screen row `row` back from the pixels by matching every 8×16 cell against the font. */
  textRow(row: number): string {
    let s = '';
    for (let col = 0; col < this.width / 8; col++) s += this.cellChar(row, col);
    return s.trimEnd();
  }

  screenText(): string {
    const rows: string[] = [];
    for (let r = 0; r < this.height / 16; r++) rows.push(this.textRow(r));
    return rows.join('\n');
  }

  /** Keep requesting incremental updates until the decoded screen satisfies `done` (the screen is read by OCR). */
  async updateUntil(done: (text: string) => boolean, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.screenText())) {
      if (Date.now() > deadline) throw new Error(`screen never matched; it shows:\n${this.screenText()}`);
      this.requestUpdate(true);
      await this.readUpdate(Math.max(1, deadline - Date.now())).catch(() => undefined);
    }
    return this.screenText();
  }

  private cellChar(row: number, col: number): string {
    const px = (x: number, y: number) => this.fb[(row * 16 + y) * this.width + col * 8 + x]!;
    // Column 7 is blank in every glyph of the font except '*' and '_', so its top pixel is the cell background.
    const background = px(7, 0);
    const matches = (code: number, rows: number) => {
      for (let y = 0; y < rows; y++) {
        const bits = glyphRow(code, y);
        for (let x = 0; x < 8; x++) if ((px(x, y) !== background) !== ((bits >> x) & 1) > 0) return false;
      }
      return true;
    };
    // Rows 14-15 may also carry the cursor underline: prefer a full match, else one on the first 14 rows.
    for (let code = 0x20; code <= 0x7e; code++) if (matches(code, 16)) return String.fromCharCode(code);
    for (let code = 0x20; code <= 0x7e; code++) if (matches(code, 14)) return String.fromCharCode(code);
    return '?';
  }
}

export function wsUrl(cluster: EmbeddedCluster, path: string): string {
  return cluster.url.replace(/^http/, 'ws') + path;
}

export const vncPath = (name: string, query = '') =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/${name}/vnc${query}`;
export const consolePath = (name: string) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/${name}/console`;
