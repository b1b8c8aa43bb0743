/**
 * Keeps a long relay's garbage small. Every chunk read from a socket is a fresh off-heap buffer that is garbage as
 * soon as it has been written on, but V8 only collects off-heap memory on its own once 64 MB more of it exist than
 * at the last collection — so relaying a disk image grew Corral's RSS by up to ~70 MB of dead network buffers
 * (`npm run bench:export`). A young-generation collection (a scavenge: a millisecond, the old generation is not
 * touched) every few MiB relayed frees them while they are still young. That needs V8's `gc` function: Corral's
 * launchers (`npm start`, `bin/corral.mjs`, the benches) start Node with `--expose-gc`; a process started without
 * it relays exactly the same, only with the larger transient footprint. The flag is never switched on at run time
 * (V8 documents that as undefined behaviour once the VM is running).
 */

type GcFunction = (options?: { type?: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collector: GcFunction | null | undefined;

function gcFunction(): GcFunction | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: unknown }).gc;
  return (collector = typeof exposed === 'function' ? (exposed as GcFunction) : null);
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
