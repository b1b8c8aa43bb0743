/**
 * Keeps a long relay's garbage small. Every chunk read from a socket is a fresh off-heap buffer that is garbage as
 * soon as it has been written on, but V8 only collects off-heap memory on its own once 64 MB more of it exist than
 * at the last collection — so relaying a disk image grew Corral's RSS by up to ~70 MB of dead network buffers
 * (`npm run bench:export`). A young-generation collection (a scavenge: a millisecond, the old generation is not
 * touched) every few MiB relayed frees them while they are still young. V8's `gc` function is exposed once for
 * that; where the runtime refuses, the relay works as before, only with the larger transient footprint.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options?: { type?: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collector: GcFunction | null | undefined;

function gcFunction(): GcFunction | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (collector = exposed as GcFunction);
  try {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    collector = typeof fn === 'function' ? (fn as GcFunction) : null;
  } catch {
    collector = null;
  }
  return collector;
}

/** Bytes relayed between two scavenges: the most dead buffer memory a relay leaves waiting. */
export const SCAVENGE_EVERY_BYTES = 4 * 1024 * 1024;

/** A `data` listener that asks for a scavenge after every `every` bytes that passed (a no-op without `gc`). */
export function scavengeWhileRelaying(every = SCAVENGE_EVERY_BYTES): (chunk: Buffer) => void {
  const gc = gcFunction();
  let since = 0;
  return (chunk) => {
    if (!gc) return;
    since += chunk.length;
    if (since < every) return;
    since = 0;
    gc({ type: 'minor' });
  };
}
