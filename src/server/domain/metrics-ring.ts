/**
 * The retained history behind the metrics store: three rings per VM (hour at full resolution, day and week as
 * averages), packed so 10,000 VMs stay cheap.
 *
 * - Every series is written on the same tick, so the timestamps live once, in the `TickClock`, not per VM.
 * - Values are 16-bit codes (`encode`/`decode`): a 6-bit exponent and a 10-bit mantissa, relative error ≤ 1/2048
 *   (~3.3 significant digits) from 1/256 up to ~7e16; 0 is exact and `ABSENT` marks "not measured".
 * - One VM is one `Uint16Array` of (240 + 288 + 336) slots × 6 series = 10,368 bytes, plus 192 bytes of running
 *   sums for the day and week buckets being filled.
 *
 * Downsampling counts ticks, not wall time: a day point averages 20 ticks and a week point 120, which at the
 * default 15 s interval is 5 and 30 minutes (with a shorter interval, as in tests, everything scales down). The
 * newest day/week point is the average of its bucket so far (kept in running sums and written as a code when the
 * bucket closes), so the coarse charts are never minutes behind.
 */

export const SERIES = ['cpu', 'mem', 'netin', 'netout', 'diskread', 'diskwrite'] as const;
export type SeriesName = (typeof SERIES)[number];
export const SERIES_COUNT = SERIES.length;

export interface WindowSpec {
  /** Points retained. */
  slots: number;
  /** Ticks averaged into one point. */
  every: number;
}

export const WINDOW_SPECS = {
  hour: { slots: 240, every: 1 },
  day: { slots: 288, every: 20 },
  week: { slots: 336, every: 120 },
} as const satisfies Record<string, WindowSpec>;
export type WindowName = keyof typeof WINDOW_SPECS;
const WINDOW_NAMES = Object.keys(WINDOW_SPECS) as WindowName[];

/** Offset of each window's slots inside a VM's buffer, in values (slot × series). */
const OFFSETS: Record<WindowName, number> = { hour: 0, day: 0, week: 0 };
let total = 0;
for (const w of WINDOW_NAMES) {
  OFFSETS[w] = total;
  total += WINDOW_SPECS[w].slots * SERIES_COUNT;
}
/** Values held per VM across the three windows. */
export const VALUES_PER_SERIES_BLOCK = total;

// ---- 16-bit value encoding ----

export const ABSENT = 0xffff;
const MANTISSA_BITS = 10;
const MANTISSA = 1 << MANTISSA_BITS;
/** Exponent 0 stands for 2^-8 (code 0 itself is the exact zero). */
const EXPONENT_BIAS = 8;
const MAX_CODE = 0xfffe;

/** Every code's value, so reading (and summing 10,000 VMs) is a table lookup. NaN for ABSENT. */
const DECODE = new Float64Array(0x10000);
for (let code = 1; code <= MAX_CODE; code++) {
  const e = code >>> MANTISSA_BITS;
  const m = code & (MANTISSA - 1);
  DECODE[code] = (1 + m / MANTISSA) * 2 ** (e - EXPONENT_BIAS);
}
DECODE[0] = 0;
DECODE[ABSENT] = Number.NaN;

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
/** Index of the high word of a float64 in U32 (little- or big-endian hosts). */
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** A non-negative number as a 16-bit code; NaN/undefined → ABSENT, negatives and tiny values → 0. */
export function encode(v: number | undefined): number {
  if (v === undefined || v !== v) return ABSENT;
  if (!(v >= 2 ** -EXPONENT_BIAS)) return 0;
  // Exponent and the top 11 mantissa bits straight from the float64's bits, rounded to 10.
  F64[0] = v;
  const hi = U32[HI]!;
  let e = ((hi >>> 20) & 0x7ff) - 1023;
  let m = (((hi >>> 9) & 0x7ff) + 1) >>> 1;
  if (m === MANTISSA) {
    m = 0;
    e++;
  }
  const code = ((e + EXPONENT_BIAS) << MANTISSA_BITS) | m;
  return code > MAX_CODE ? MAX_CODE : code;
}

export function decode(code: number): number {
  return DECODE[code]!;
}

// ---- the shared clock ----

interface WindowClock {
  /** Sample time of each slot's first tick (epoch ms). */
  times: Float64Array;
  /** Slots filled so far (≤ slots). */
  filled: number;
  /** Slot of the newest point. */
  head: number;
}

/** One tick as the series see it: which slot to write per window, and whether a new bucket starts there. */
export interface TickSlots {
  tick: number;
  slot: Record<WindowName, number>;
  fresh: Record<WindowName, boolean>;
  /** This tick completes the window's bucket. */
  closes: Record<WindowName, boolean>;
}

/** The timestamps every series shares, one ring per window. */
export class TickClock {
  private ticks = 0;
  private readonly windows: Record<WindowName, WindowClock>;

  constructor() {
    const make = (w: WindowName): WindowClock => ({
      times: new Float64Array(WINDOW_SPECS[w].slots),
      filled: 0,
      head: -1,
    });
    this.windows = { hour: make('hour'), day: make('day'), week: make('week') };
  }

  /** Ticks taken so far. */
  count(): number {
    return this.ticks;
  }

  /** Advances by one tick at time `t` and says where each window writes it. */
  advance(t: number): TickSlots {
    const tick = this.ticks++;
    const slot = { hour: 0, day: 0, week: 0 };
    const fresh = { hour: false, day: false, week: false };
    const closes = { hour: false, day: false, week: false };
    for (const w of WINDOW_NAMES) {
      const spec = WINDOW_SPECS[w];
      const clock = this.windows[w];
      if (tick % spec.every === 0) {
        clock.head = (clock.head + 1) % spec.slots;
        clock.times[clock.head] = t;
        clock.filled = Math.min(spec.slots, clock.filled + 1);
        fresh[w] = true;
      }
      slot[w] = clock.head;
      closes[w] = tick % spec.every === spec.every - 1;
    }
    return { tick, slot, fresh, closes };
  }

  /** Slots of a window, oldest first, with their times. */
  slots(w: WindowName): { slot: number; t: number }[] {
    const clock = this.windows[w];
    const n = WINDOW_SPECS[w].slots;
    const out: { slot: number; t: number }[] = [];
    for (let i = clock.filled - 1; i >= 0; i--) {
      const slot = (clock.head - i + n) % n;
      out.push({ slot, t: clock.times[slot]! });
    }
    return out;
  }

  /** The slot whose bucket is still filling (its value lives in the running sums), or -1. */
  openSlot(w: WindowName): number {
    const every = WINDOW_SPECS[w].every;
    return this.ticks > 0 && this.ticks % every !== 0 ? this.windows[w].head : -1;
  }

  /** The hour slot of the newest tick (-1 before the first). */
  newestSlot(): number {
    return this.windows.hour.head;
  }

  newestTime(): number | undefined {
    const head = this.windows.hour.head;
    return head < 0 ? undefined : this.windows.hour.times[head];
  }
}

// ---- one VM's series ----

/** Values of one tick: NaN (or undefined) where not measured. */
export type Reading = Partial<Record<SeriesName, number>>;

/** A reading as series-ordered numbers (NaN: not measured), in one reused array: named property reads, no keyed ones. */
const SCRATCH = new Float64Array(SERIES_COUNT);
function load(r: Reading): Float64Array {
  SCRATCH[0] = r.cpu ?? Number.NaN;
  SCRATCH[1] = r.mem ?? Number.NaN;
  SCRATCH[2] = r.netin ?? Number.NaN;
  SCRATCH[3] = r.netout ?? Number.NaN;
  SCRATCH[4] = r.diskread ?? Number.NaN;
  SCRATCH[5] = r.diskwrite ?? Number.NaN;
  return SCRATCH;
}

export class SeriesBlock {
  /** Every window's slots × series, as 16-bit codes. */
  readonly values = new Uint16Array(VALUES_PER_SERIES_BLOCK).fill(ABSENT);
  /** Running sums and counts of the day and week buckets being filled: [day sums, day counts, week sums, week counts]. */
  private readonly acc = new Float64Array(4 * SERIES_COUNT);

  /** Writes one tick (undefined: the VM was not measured in it, so its hour slot is cleared). */
  write(at: TickSlots, reading: Reading | undefined): void {
    const base = at.slot.hour * SERIES_COUNT;
    const v = reading ? load(reading) : undefined;
    for (let s = 0; s < SERIES_COUNT; s++) this.values[base + s] = v ? encode(v[s]) : ABSENT;
    // Flat arguments: this runs 10,000 times a round, and keyed reads of `at` by window name cost more than the math.
    this.fold(0, OFFSETS.day + at.slot.day * SERIES_COUNT, at.fresh.day, at.closes.day, v);
    this.fold(2 * SERIES_COUNT, OFFSETS.week + at.slot.week * SERIES_COUNT, at.fresh.week, at.closes.week, v);
  }

  private fold(
    accOffset: number,
    base: number,
    fresh: boolean,
    closes: boolean,
    reading: Float64Array | undefined,
  ): void {
    const acc = this.acc;
    if (fresh) {
      acc.fill(0, accOffset, accOffset + 2 * SERIES_COUNT);
      this.values.fill(ABSENT, base, base + SERIES_COUNT); // the slot held a bucket one lap ago
    }
    if (reading)
      for (let s = 0; s < SERIES_COUNT; s++) {
        const v = reading[s]!;
        if (v === v) {
          acc[accOffset + s]! += v;
          acc[accOffset + SERIES_COUNT + s]! += 1;
        }
      }
    if (closes)
      for (let s = 0; s < SERIES_COUNT; s++) {
        const n = acc[accOffset + SERIES_COUNT + s]!;
        this.values[base + s] = n > 0 ? encode(acc[accOffset + s]! / n) : ABSENT;
      }
  }

  /** The average so far of the bucket being filled, as its code will hold it; NaN when nothing was measured. */
  private openValue(w: WindowName, s: number): number {
    const accOffset = w === 'day' ? 0 : 2 * SERIES_COUNT;
    const n = this.acc[accOffset + SERIES_COUNT + s]!;
    return n > 0 ? DECODE[encode(this.acc[accOffset + s]! / n)]! : Number.NaN;
  }

  /** The stored code of one series at one slot (a filling day/week bucket is ABSENT here: see `value`). */
  code(w: WindowName, slot: number, s: number): number {
    return this.values[OFFSETS[w] + slot * SERIES_COUNT + s]!;
  }

  /** One series at one slot; `openSlot` is the clock's `openSlot(w)`. NaN where not measured. */
  value(w: WindowName, slot: number, s: number, openSlot: number): number {
    if (w !== 'hour' && slot === openSlot) return this.openValue(w, s);
    return DECODE[this.values[OFFSETS[w] + slot * SERIES_COUNT + s]!]!;
  }

  /** Adds this block's values into per-slot sums (for fleet and node series); `present` marks slots with a value. */
  addInto(w: WindowName, sums: Float64Array, present: Uint8Array, openSlot: number): void {
    const offset = OFFSETS[w];
    const n = WINDOW_SPECS[w].slots * SERIES_COUNT;
    const values = this.values;
    for (let i = 0; i < n; i++) {
      const code = values[offset + i]!;
      if (code !== ABSENT) {
        sums[i]! += DECODE[code]!;
        present[i] = 1;
      }
    }
    if (w === 'hour' || openSlot < 0) return;
    for (let s = 0; s < SERIES_COUNT; s++) {
      const v = this.openValue(w, s);
      if (v === v) {
        sums[openSlot * SERIES_COUNT + s]! += v;
        present[openSlot * SERIES_COUNT + s] = 1;
      }
    }
  }

  /** Bytes this block holds (the typed arrays' payloads). */
  static bytes(): number {
    return VALUES_PER_SERIES_BLOCK * 2 + 4 * SERIES_COUNT * 8;
  }
}

/** A point as the DTO wants it: cpu required (no cpu, no point), the rest only when measured. */
export function pointOf(t: number, get: (s: number) => number): Record<string, number> | undefined {
  const cpu = get(0);
  if (Number.isNaN(cpu)) return undefined;
  const point: Record<string, number> = { t, cpu };
  for (let s = 1; s < SERIES_COUNT; s++) {
    const v = get(s);
    if (!Number.isNaN(v)) point[SERIES[s]!] = v;
  }
  return point;
}
