/**
 * The protobuf wire format, read side: varints, length-delimited fields, and skipping fields we do not describe.
 * Malformed input throws a `ProtoError`; the HTTP layer turns it into a 400 decode error.
 */

export class ProtoError extends Error {}

export const WIRE = { varint: 0, fixed64: 1, bytes: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const;

export interface FieldHeader {
  no: number;
  wireType: number;
}

export class ProtoReader {
  pos = 0;
  private readonly text: Buffer;
  constructor(
    readonly buf: Uint8Array,
    readonly end = buf.length,
    text?: Buffer,
  ) {
    this.text = text ?? (Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint as an unsigned 64-bit integer. */
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtoError('unexpected end of data inside a varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    throw new ProtoError('varint longer than 10 bytes');
  }

  /**
   * The fast path: a varint of at most 7 bytes (below 2^49) read with plain numbers; undefined (position unchanged)
   * for a longer one, which needs BigInt — negative integers are always 10 bytes.
   */
  private short(): number | undefined {
    const start = this.pos;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new ProtoError('unexpected end of data inside a varint');
      const byte = this.buf[this.pos++]!;
      result += (byte & 0x7f) * mul;
      if (byte < 0x80) return result;
      mul *= 128;
    }
    this.pos = start;
    return undefined;
  }

  /** An unsigned varint as a number (exact below 2^53). */
  uint(): number {
    return this.short() ?? Number(this.varint());
  }

  /** A varint as a signed int32 or int64 (two's complement, as Go writes negative values). */
  signed(bits: 32 | 64): number {
    const fast = this.short();
    if (fast !== undefined) return bits === 32 ? fast | 0 : fast;
    return Number(BigInt.asIntN(bits, this.varint()));
  }

  /** A varint that must fit a JavaScript array index or length. */
  length(): number {
    const n = this.uint();
    if (n > this.end - this.pos) throw new ProtoError(`length ${n} runs past the end of the data`);
    return n;
  }

  header(): FieldHeader {
    const key = this.uint();
    const no = Math.floor(key / 8);
    if (no === 0) throw new ProtoError('field number 0 is invalid');
    return { no, wireType: key % 8 };
  }

  /** A length-delimited UTF-8 string (Buffer's decoder: much faster than TextDecoder on short strings). */
  string(): string {
    const len = this.length();
    const start = this.pos;
    this.pos += len;
    return this.text.toString('utf8', start, start + len);
  }

  bytes(): Uint8Array {
    const len = this.length();
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  /** A sub-reader over the next length-delimited field (an embedded message or a packed run). */
  sub(): ProtoReader {
    const len = this.length();
    const reader = new ProtoReader(this.buf, this.pos + len, this.text);
    reader.pos = this.pos;
    this.pos += len;
    return reader;
  }

  fixed(size: 4 | 8): void {
    if (this.pos + size > this.end) throw new ProtoError('unexpected end of data inside a fixed-width field');
    this.pos += size;
  }

  /** Skip a field of a number the descriptors do not know (protobuf semantics: unknown fields are ignored). */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE.varint:
        this.varint();
        return;
      case WIRE.fixed64:
        this.fixed(8);
        return;
      case WIRE.bytes: {
        const len = this.length(); // read before adding: `this.pos += this.length()` would add to the old position
        this.pos += len;
        return;
      }
      case WIRE.fixed32:
        this.fixed(4);
        return;
      default:
        throw new ProtoError(`unsupported wire type ${wireType}`);
    }
  }
}
