/**
 * The retained serial output of each VM: the last 256 KiB the bridges relayed, byte-exact (no decoding, so a
 * UTF-8 sequence or an escape sequence cut at the start is kept as bytes; xterm.js copes with that).
 */
export const SERIAL_LOG_BYTES = 256 * 1024;

/** A fixed-capacity byte ring: appends overwrite the oldest bytes. Storage grows on demand up to the capacity. */
export class ByteRing {
  private buf: Buffer = Buffer.alloc(0);
  private start = 0; // index of the oldest byte in buf
  private length = 0;

  constructor(readonly capacity: number = SERIAL_LOG_BYTES) {
    if (!Number.isInteger(capacity) || capacity <= 0)
      throw new RangeError(`ByteRing capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.length;
  }

  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (chunk.length >= this.capacity) {
      // Only the tail of an oversized chunk can survive.
      this.ensureStorage(this.capacity);
      this.buf.set(chunk.subarray(chunk.length - this.capacity));
      this.start = 0;
      this.length = this.capacity;
      return;
    }
    this.ensureStorage(Math.min(this.capacity, this.length + chunk.length));
    const cap = this.buf.length;
    const write = (this.start + this.length) % cap;
    const firstPart = Math.min(chunk.length, cap - write);
    this.buf.set(chunk.subarray(0, firstPart), write);
    if (firstPart < chunk.length) this.buf.set(chunk.subarray(firstPart), 0);
    const overflow = this.length + chunk.length - cap;
    if (overflow > 0) {
      this.start = (this.start + overflow) % cap;
      this.length = cap;
    } else {
      this.length += chunk.length;
    }
  }

  /** A copy of the retained bytes, oldest first. */
  contents(): Buffer {
    const out = Buffer.alloc(this.length);
    const cap = this.buf.length;
    if (cap === 0) return out;
    const firstPart = Math.min(this.length, cap - this.start);
    this.buf.copy(out, 0, this.start, this.start + firstPart);
    if (firstPart < this.length) this.buf.copy(out, firstPart, 0, this.length - firstPart);
    return out;
  }

  /** Grows the backing buffer (linearising the contents) until it holds `needed` bytes or reaches capacity. */
  private ensureStorage(needed: number): void {
    if (this.buf.length >= needed) return;
    const size = Math.min(this.capacity, Math.max(needed, this.buf.length * 2, 4096));
    const next = Buffer.alloc(size);
    this.contents().copy(next, 0);
    this.buf = next;
    this.start = 0;
  }
}

/**
 * Serial logs by VM, bounded in count as well (least recently written evicted) so a large fleet cannot make the
 * server hold 256 KiB for every VM it ever showed.
 */
export class SerialLogStore {
  private readonly logs = new Map<string, ByteRing>();

  constructor(
    private readonly maxVms = 512,
    private readonly bytesPerVm = SERIAL_LOG_BYTES,
  ) {}

  /** `context`: the kube context the VM is on (the same namespace/name may exist in several clusters). */
  private key(namespace: string, name: string, context = ''): string {
    return `${context}:${namespace}/${name}`;
  }

  append(namespace: string, name: string, chunk: Uint8Array, context?: string): void {
    const key = this.key(namespace, name, context);
    let ring = this.logs.get(key);
    if (ring) {
      this.logs.delete(key); // re-insert: Map order is the LRU order
    } else {
      ring = new ByteRing(this.bytesPerVm);
      while (this.logs.size >= this.maxVms) {
        const oldest = this.logs.keys().next();
        if (oldest.done) break;
        this.logs.delete(oldest.value);
      }
    }
    this.logs.set(key, ring);
    ring.append(chunk);
  }

  read(namespace: string, name: string, context?: string): Buffer {
    return this.logs.get(this.key(namespace, name, context))?.contents() ?? Buffer.alloc(0);
  }

  size(namespace: string, name: string, context?: string): number {
    return this.logs.get(this.key(namespace, name, context))?.size ?? 0;
  }
}
