import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ByteRing, SERIAL_LOG_BYTES, SerialLogStore } from './serial-ring.js';

/** Reference model: keep everything, take the tail. */
function tail(chunks: Buffer[], capacity: number): Buffer {
  const all = Buffer.concat(chunks);
  return all.subarray(Math.max(0, all.length - capacity));
}

describe('ByteRing', () => {
  it('holds everything below capacity, in order', () => {
    const ring = new ByteRing(16);
    ring.append(Buffer.from('hello '));
    ring.append(Buffer.from('world'));
    expect(ring.contents().toString()).toBe('hello world');
    expect(ring.size).toBe(11);
  });

  it('keeps exactly the last capacity bytes when wrapping', () => {
    const ring = new ByteRing(8);
    ring.append(Buffer.from('abcdef'));
    ring.append(Buffer.from('ghij'));
    expect(ring.contents().toString()).toBe('cdefghij');
    ring.append(Buffer.from('k'));
    expect(ring.contents().toString()).toBe('defghijk');
  });

  it('keeps the tail of a chunk larger than the capacity', () => {
    const ring = new ByteRing(4);
    ring.append(Buffer.from('ab'));
    ring.append(Buffer.from('0123456789'));
    expect(ring.contents().toString()).toBe('6789');
  });

  it('is byte-exact against a reference model over random chunk sizes (256 KiB default)', () => {
    const ring = new ByteRing();
    expect(ring.capacity).toBe(SERIAL_LOG_BYTES);
    const chunks: Buffer[] = [];
    let seed = 7;
    for (let i = 0; i < 400; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const chunk = randomBytes(seed % 5000);
      chunks.push(chunk);
      ring.append(chunk);
    }
    chunks.push(randomBytes(300_000));
    ring.append(chunks[chunks.length - 1]!);
    ring.append(Buffer.from([0, 255, 10, 13]));
    chunks.push(Buffer.from([0, 255, 10, 13]));
    const expected = tail(chunks, SERIAL_LOG_BYTES);
    expect(ring.size).toBe(SERIAL_LOG_BYTES);
    expect(ring.contents().equals(expected)).toBe(true);
  });

  it('refuses a nonsensical capacity', () => {
    expect(() => new ByteRing(0)).toThrow(/positive integer/);
  });
});

describe('SerialLogStore', () => {
  it('keeps one log per VM', () => {
    const logs = new SerialLogStore();
    logs.append('tailvm', 'web', Buffer.from('web boot'));
    logs.append('tailvm', 'db', Buffer.from('db boot'));
    expect(logs.read('tailvm', 'web').toString()).toBe('web boot');
    expect(logs.read('tailvm', 'db').toString()).toBe('db boot');
    expect(logs.read('tailvm', 'none').length).toBe(0);
  });

  it('evicts the least recently written VM beyond its VM limit', () => {
    const logs = new SerialLogStore(2, 64);
    logs.append('ns', 'a', Buffer.from('a'));
    logs.append('ns', 'b', Buffer.from('b'));
    logs.append('ns', 'a', Buffer.from('a')); // a is now the most recent
    logs.append('ns', 'c', Buffer.from('c'));
    expect(logs.read('ns', 'b').length).toBe(0);
    expect(logs.read('ns', 'a').toString()).toBe('aa');
    expect(logs.size('ns', 'c')).toBe(1);
  });
});
