import { describe, expect, it } from 'vitest';
import { hasTerm, matchesFilter, parseFilter, toggleTerm, type FilterableVm } from './filter-query';

const vm = (over: Partial<FilterableVm> = {}): FilterableVm => ({
  name: 'web-1',
  namespace: 'tailvm',
  status: 'Running',
  node: 'bihar',
  ip: '10.42.0.15',
  tags: ['prod', 'frontend'],
  ...over,
});

const keep = (q: string, rows: FilterableVm[]) =>
  rows.filter((r) => matchesFilter(parseFilter(q), r)).map((r) => r.name);

describe('parseFilter', () => {
  it('separates keyed terms from free text and lower-cases both', () => {
    const f = parseFilter('Web tag:Prod status:running,Paused -node:bihar');
    expect(f.words).toEqual(['web']);
    expect(f.terms).toEqual([
      { key: 'tag', values: ['prod'], negated: false },
      { key: 'status', values: ['running', 'paused'], negated: false },
      { key: 'node', values: ['bihar'], negated: true },
    ]);
    expect(f.problems).toEqual([]);
  });

  it('accepts namespace: and state: aliases', () => {
    expect(parseFilter('namespace:a state:b').terms.map((t) => t.key)).toEqual(['ns', 'status']);
  });

  it('reports unknown keys and empty values but keeps the rest of the query', () => {
    const f = parseFilter('color:red tag: web');
    expect(f.problems).toHaveLength(2);
    expect(f.words).toEqual(['color:red', 'web']);
    expect(f.terms).toEqual([]);
  });

  it('parses type: into vm or ct, accepting the Proxmox words and kind: as an alias', () => {
    expect(parseFilter('type:ct').terms).toEqual([{ key: 'type', values: ['ct'], negated: false }]);
    expect(parseFilter('-type:VM').terms).toEqual([{ key: 'type', values: ['vm'], negated: true }]);
    expect(parseFilter('kind:lxc,qemu').terms).toEqual([{ key: 'type', values: ['ct', 'vm'], negated: false }]);
    expect(parseFilter('type:container,ct').terms[0]?.values).toEqual(['ct']);
  });

  it('reports an unknown type and drops that term, keeping the rest', () => {
    const f = parseFilter('type:pod web');
    expect(f.problems).toEqual(['"type:pod" is not a type (use type:vm or type:ct)']);
    expect(f.terms).toEqual([]);
    expect(f.words).toEqual(['web']);
  });

  it('keeps quoted text together', () => {
    expect(parseFilter('"db main" tag:"x"').words).toEqual(['db main']);
    expect(parseFilter('"db main" tag:"x"').terms[0]?.values).toEqual(['x']);
  });
});

describe('matchesFilter', () => {
  const rows = [
    vm(),
    vm({ name: 'db', status: 'Stopped', node: '', ip: '', tags: ['prod'] }),
    vm({ name: 'ci', namespace: 'dev', status: 'Paused', node: 'kerala', tags: [] }),
  ];

  it('matches everything on an empty query', () => {
    expect(keep('', rows)).toEqual(['web-1', 'db', 'ci']);
  });

  it('filters by tag, status, node and namespace', () => {
    expect(keep('tag:prod', rows)).toEqual(['web-1', 'db']);
    expect(keep('tag:frontend', rows)).toEqual(['web-1']);
    expect(keep('status:stopped', rows)).toEqual(['db']);
    expect(keep('status:running,paused', rows)).toEqual(['web-1', 'ci']);
    expect(keep('node:kerala', rows)).toEqual(['ci']);
    expect(keep('node:none', rows)).toEqual(['db']);
    expect(keep('ns:dev', rows)).toEqual(['ci']);
  });

  it('ANDs different terms and negates with a leading minus', () => {
    expect(keep('tag:prod status:running', rows)).toEqual(['web-1']);
    expect(keep('-tag:prod', rows)).toEqual(['ci']);
    expect(keep('-status:running tag:prod', rows)).toEqual(['db']);
  });

  it('matches free text against name, namespace, node, ip and tags', () => {
    expect(keep('web', rows)).toEqual(['web-1']);
    expect(keep('dev', rows)).toEqual(['ci']);
    expect(keep('10.42', rows)).toEqual(['web-1', 'ci']);
    expect(keep('front', rows)).toEqual(['web-1']);
    expect(keep('web db', rows)).toEqual([]);
  });

  it('filters by type: rows without a type are VMs; CTs combine with the other terms', () => {
    const mixed = [
      ...rows,
      vm({ name: 'box', type: 'ct', status: 'Running', tags: [] }),
      vm({ name: 'idle', type: 'ct', status: 'Stopped', node: '', ip: '', tags: [] }),
    ];
    expect(keep('type:ct', mixed)).toEqual(['box', 'idle']);
    expect(keep('type:vm', mixed)).toEqual(['web-1', 'db', 'ci']);
    expect(keep('-type:ct', mixed)).toEqual(['web-1', 'db', 'ci']);
    expect(keep('type:ct,vm', mixed)).toHaveLength(5);
    expect(keep('type:ct status:stopped', mixed)).toEqual(['idle']);
    expect(keep('type:ct node:none', mixed)).toEqual(['idle']);
    expect(keep('type:ct tag:prod', mixed)).toEqual([]);
  });

  it('does not match a tag by substring in a tag: term', () => {
    expect(keep('tag:pro', rows)).toEqual([]);
  });
});

describe('toggleTerm', () => {
  it('adds a missing term and removes a present one', () => {
    expect(toggleTerm('web', 'tag', 'prod')).toBe('web tag:prod');
    expect(toggleTerm('web tag:prod', 'tag', 'prod')).toBe('web');
    expect(hasTerm('web TAG:prod', 'tag', 'prod')).toBe(true);
    expect(hasTerm('web', 'tag', 'prod')).toBe(false);
  });
});
