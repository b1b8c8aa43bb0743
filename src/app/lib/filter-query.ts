// The VM table's filter language: free text plus `tag:`, `status:`, `node:` and `ns:` terms.
// Pure so the parser and the matcher are unit-tested and shared by the tree's filter box and the table.

/** The subset of a VM row the filter looks at. */
export interface FilterableVm {
  name: string;
  namespace: string;
  status: string;
  node: string;
  ip: string;
  tags: readonly string[];
}

export type FilterKey = 'tag' | 'status' | 'node' | 'ns';

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
      problems.push(`unknown filter "${rawKey}:" (use tag:, status:, node: or ns:) — matched as text`);
      words.push(token.toLowerCase());
      continue;
    }
    if (values.length === 0) {
      problems.push(`"${rawKey}:" needs a value`);
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
