/**
 * One copy of each repeated string in the watch cache (issue 17, docs/scale.md "Memory"): JSON.parse makes a new
 * string for every value, so 50,000 VMs in one namespace on a few nodes hold 50,000 copies of the namespace, of
 * each label value, of each node name and image. Interning makes them share one.
 *
 * The table is bounded: once it holds `limit` strings it starts over (the strings already shared stay shared; a
 * repeated string is back in the new table the next time it is seen). So a stream of unique values (names,
 * vmids) cannot grow it without end, and the cost of a miss is one map entry until the next start-over.
 */
export class Interner {
  private table = new Map<string, string>();

  constructor(private readonly limit = 20_000) {}

  /** The shared copy of `s` (the first one seen since the last start-over). */
  intern(s: string): string {
    const known = this.table.get(s);
    if (known !== undefined) return known;
    if (this.table.size >= this.limit) this.table = new Map();
    this.table.set(s, s);
    return s;
  }

  /** How many strings the table holds now. */
  get size(): number {
    return this.table.size;
  }
}
