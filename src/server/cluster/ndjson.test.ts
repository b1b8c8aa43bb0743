import { describe, expect, it } from 'vitest';
import { LineSplitter } from './ndjson';

describe('LineSplitter', () => {
  it('cuts lines across chunks, also inside a multi-byte character, and skips blank lines', () => {
    const bytes = new TextEncoder().encode('{"a":1}\n\n{"b":"é"}\n{"c"');
    const split = new LineSplitter();
    const cutInsideE = bytes.indexOf(0xc3) + 1; // between the two bytes of "é"
    expect(split.push(bytes.subarray(0, 3))).toEqual([]);
    expect(split.push(bytes.subarray(3, cutInsideE))).toEqual(['{"a":1}']);
    expect(split.push(bytes.subarray(cutInsideE))).toEqual(['{"b":"é"}']);
    expect(split.push(new TextEncoder().encode(':3}\n'))).toEqual(['{"c":3}']);
  });
});
