// The Datacenter table's and the tree's filter language: free text plus `tag:`, `status:`, `node:`, `ns:` and
// `type:` (vm or ct) terms. Pure so the parser and the matcher are unit-tested and shared by both.

export type GuestType = 'vm' | 'ct';

/** The subset of a VM or CT row the filter looks at (a CT's status is its phase; it has no tags). */
export interface FilterableVm {
  name: string;
  namespace: string;
  status: string;
  node: string;
  ip: string;
  tags: readonly string[];
  /** 'vm' when omitted. */
  type?: GuestType;
}

/** A CT row as the filter sees it: its phase is its status, and it has no tags. */
export function ctFilterable(ct: {
  name: string;
  namespace: string;
  phase: string;
  node: string;
  ip: string;
}): FilterableVm {
  return { name: ct.name, namespace: ct.namespace, status: ct.phase, node: ct.node, ip: ct.ip, tags: [], type: 'ct' };
}

export type FilterKey = 'tag' | 'status' | 'node' | 'ns' | 'type';

export interface FilterTerm {
  key: FilterKey;
  /** Lower-cased values; the term matches when any of them matches (`status:running,paused`). */
  values: string[];
  negated: boolean;
}

export interface ParsedFilter {
  terms: FilterTerm[];
  /** Lower-cased free-text words; every one must appear somewhere in the row. */
  words: string[];
  /** Human-readable problems (unknown key, empty value); the rest of the query still applies. */
  problems: string[];
}

const KEY_ALIASES: Record<string, FilterKey> = {
  tag: 'tag',
  tags: 'tag',
  status: 'status',
  state: 'status',
  node: 'node',
  ns: 'ns',
  namespace: 'ns',
  type: 'type',
  kind: 'type',
};

/** Accepted `type:` values: Corral's words and the Proxmox ones (qemu, lxc). */
const TYPE_VALUES: Record<string, GuestType> = {
  vm: 'vm',
  vms: 'vm',
  qemu: 'vm',
  ct: 'ct',
  cts: 'ct',
  lxc: 'ct',
  container: 'ct',
};

/** `node:none` (or `node:-`) selects VMs without a placement. */
export const UNPLACED_VALUES = new Set(['none', '-']);

/** Splits on whitespace, keeping double-quoted runs (`"web 1"`, `tag:"a b"`) together. */
function tokenize(query: string): string[] {
  const tokens: string[] = [];
  const re = /(?:[^\s"]+|"[^"]*"?)+/g;
  for (const m of query.matchAll(re)) tokens.push(m[0].replace(/"/g, ''));
  return tokens.filter((t) => t.length > 0);
}

export function parseFilter(query: string): ParsedFilter {
  const terms: FilterTerm[] = [];
  const words: string[] = [];
  const problems: string[] = [];
  for (const token of tokenize(query)) {
    const negated = token.startsWith('-') && token.length > 1;
    const body = negated ? token.slice(1) : token;
    const colon = body.indexOf(':');
    if (colon <= 0) {
      words.push(token.toLowerCase());
      continue;
    }
    const rawKey = body.slice(0, colon).toLowerCase();
    const key = KEY_ALIASES[rawKey];
    const values = body
      .slice(colon + 1)
      .split(',')
      .map((v) => v.trim().toLowerCase())
      .filter((v) => v.length > 0);
    if (!key) {
      problems.push(`unknown filter "${rawKey}:" (use tag:, status:, node:, ns: or type:) — matched as text`);
      words.push(token.toLowerCase());
      continue;
    }
    if (values.length === 0) {
      problems.push(`"${rawKey}:" needs a value`);
      continue;
    }
    if (key === 'type') {
      const unknown = values.filter((v) => !TYPE_VALUES[v]);
      if (unknown.length > 0) {
        problems.push(`"${rawKey}:${unknown.join(',')}" is not a type (use type:vm or type:ct)`);
        continue;
      }
      terms.push({ key, values: [...new Set(values.map((v) => TYPE_VALUES[v] as GuestType))], negated });
      continue;
    }
    terms.push({ key, values, negated });
  }
  return { terms, words, problems };
}

function termMatches(term: FilterTerm, vm: FilterableVm): boolean {
  switch (term.key) {
    case 'tag':
      return vm.tags.some((t) => term.values.includes(t.toLowerCase()));
    case 'status':
      return term.values.includes(vm.status.toLowerCase());
    case 'node':
      return term.values.some((v) => (UNPLACED_VALUES.has(v) ? vm.node === '' : vm.node.toLowerCase() === v));
    case 'ns':
      return term.values.includes(vm.namespace.toLowerCase());
    case 'type':
      return term.values.includes(vm.type ?? 'vm');
  }
}

function wordMatches(word: string, vm: FilterableVm): boolean {
  return (
    vm.name.toLowerCase().includes(word) ||
    vm.namespace.toLowerCase().includes(word) ||
    vm.node.toLowerCase().includes(word) ||
    vm.ip.includes(word) ||
    vm.status.toLowerCase() === word ||
    vm.tags.some((t) => t.toLowerCase().includes(word))
  );
}

export function matchesFilter(filter: ParsedFilter, vm: FilterableVm): boolean {
  for (const term of filter.terms) if (termMatches(term, vm) === term.negated) return false;
  for (const word of filter.words) if (!wordMatches(word, vm)) return false;
  return true;
}

export function isEmptyFilter(filter: ParsedFilter): boolean {
  return filter.terms.length === 0 && filter.words.length === 0;
}

/** Adds `key:value` to a query unless an equal term is already there; removes it when it is (chip toggling). */
export function toggleTerm(query: string, key: FilterKey, value: string): string {
  const wanted = `${key}:${value}`.toLowerCase();
  const tokens = tokenize(query);
  const kept = tokens.filter((t) => t.toLowerCase() !== wanted);
  if (kept.length !== tokens.length) return kept.join(' ');
  return [...tokens, `${key}:${value}`].join(' ');
}

export function hasTerm(query: string, key: FilterKey, value: string): boolean {
  const wanted = `${key}:${value}`.toLowerCase();
  return tokenize(query).some((t) => t.toLowerCase() === wanted);
}
