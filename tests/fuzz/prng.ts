/**
 * A small seeded PRNG (mulberry32) so every fuzz run with the same seed sends the same requests in the same order.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    chance: (p) => next() < p,
  };
}

/** The seed of a run: FUZZ_SEED (decimal or 0x-hex) or the fixed default, so CI runs are reproducible. */
export const DEFAULT_SEED = 0x14c0ffee;

export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FUZZ_SEED?.trim();
  if (!raw) return DEFAULT_SEED;
  const n = raw.toLowerCase().startsWith('0x') ? Number.parseInt(raw.slice(2), 16) : Number.parseInt(raw, 10);
  if (!Number.isFinite(n)) throw new Error(`FUZZ_SEED must be an integer, got ${raw}`);
  return n >>> 0;
}

/** `n` items of `items` (all of them when there are fewer), chosen by `rng`, in their original order. */
export function sample<T>(rng: Rng, items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  const idx = items.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i] as T);
}
