import { describe, expect, it } from 'vitest';
import { sortRows } from './sort';

interface Row {
  name: string;
  mem: string;
  cpu: number;
  ip: string;
}
const rows: Row[] = [
  { name: 'web-10', mem: '4Gi', cpu: 2, ip: '10.0.0.9' },
  { name: 'web-2', mem: '512Mi', cpu: 8, ip: '' },
  { name: 'db', mem: '16G', cpu: 4, ip: '10.0.0.10' },
];
const names = (r: Row[]) => r.map((x) => x.name);

describe('sortRows', () => {
  it('sorts names naturally in both directions', () => {
    expect(names(sortRows(rows, { key: 'name', dir: 'asc' }, 'text'))).toEqual(['db', 'web-2', 'web-10']);
    expect(names(sortRows(rows, { key: 'name', dir: 'desc' }, 'text'))).toEqual(['web-10', 'web-2', 'db']);
  });
  it('sorts sizes by bytes, not text', () => {
    expect(names(sortRows(rows, { key: 'mem', dir: 'asc' }, 'quantity'))).toEqual(['web-2', 'web-10', 'db']);
  });
  it('sorts numbers and IPs numerically with empties last', () => {
    expect(names(sortRows(rows, { key: 'cpu', dir: 'desc' }, 'number'))).toEqual(['web-2', 'db', 'web-10']);
    expect(names(sortRows(rows, { key: 'ip', dir: 'asc' }, 'ip'))).toEqual(['web-10', 'db', 'web-2']);
    expect(names(sortRows(rows, { key: 'ip', dir: 'desc' }, 'ip'))).toEqual(['db', 'web-10', 'web-2']);
  });
  it('does not mutate its input', () => {
    const copy = [...rows];
    sortRows(rows, { key: 'name', dir: 'asc' }, 'text');
    expect(rows).toEqual(copy);
  });
});
