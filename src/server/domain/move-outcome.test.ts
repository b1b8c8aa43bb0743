import { describe, expect, it } from 'vitest';
import { followPool } from './move-outcome';
import type { FolderDoc } from './pools-store';

const SRC = 'kubevirt/home/tailvm/web';
const DST = 'kubevirt/lab/tailvm/web';

const doc = (): FolderDoc => ({
  prod: { members: ['kubevirt/home/tailvm/db', SRC] },
  lab: { members: [] },
});

describe('followPool', () => {
  it('files the moved instance beside a kept source', () => {
    const d = doc();
    expect(followPool(d, SRC, DST, false)).toEqual({ kind: 'filed', path: 'prod', added: true, removed: false });
    expect(d.prod!.members).toEqual(['kubevirt/home/tailvm/db', SRC, DST]);
  });

  it('replaces a deleted source by the moved instance', () => {
    const d = doc();
    expect(followPool(d, SRC, DST, true)).toEqual({ kind: 'filed', path: 'prod', added: true, removed: true });
    expect(d.prod!.members).toEqual(['kubevirt/home/tailvm/db', DST]);
  });

  it('changes nothing when the source is in no pool', () => {
    const d = doc();
    expect(followPool(d, 'kubevirt/home/tailvm/other', DST, true)).toEqual({ kind: 'none' });
    expect(d).toEqual(doc());
  });

  it('is idempotent, and leaves a destination ref filed elsewhere where it is (one pool per instance)', () => {
    const d = doc();
    followPool(d, SRC, DST, false);
    expect(followPool(d, SRC, DST, false)).toEqual({ kind: 'filed', path: 'prod', added: false, removed: false });
    expect(d.prod!.members.filter((r) => r === DST)).toHaveLength(1);
    const e = doc();
    e.lab!.members.push(DST);
    expect(followPool(e, SRC, DST, true)).toEqual({ kind: 'elsewhere', path: 'prod', other: 'lab', removed: true });
    expect([e.prod!.members, e.lab!.members]).toEqual([['kubevirt/home/tailvm/db'], [DST]]);
  });
});
