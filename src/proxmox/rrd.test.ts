import { describe, expect, it } from 'vitest';
import { Params } from './params';
import { nodeRrd, rrdQuery, vmRrd } from './rrd';
import type { ProxmoxError } from './wire';

const q = (entries: [string, string][]) => rrdQuery(new Params(entries));

describe('rrdQuery', () => {
  it('maps every PVE timeframe onto a store window and defaults cf to AVERAGE', () => {
    expect(q([['timeframe', 'hour']])).toEqual({ timeframe: 'hour', cf: 'AVERAGE', window: 'hour' });
    expect(
      q([
        ['timeframe', 'day'],
        ['cf', 'MAX'],
      ]),
    ).toEqual({ timeframe: 'day', cf: 'MAX', window: 'day' });
    expect(q([['timeframe', 'month']]).window).toBe('week');
    expect(q([['timeframe', 'year']]).window).toBe('week');
  });

  it('refuses a missing or unknown timeframe and an unknown cf with a 400 naming the parameter', () => {
    const fail = (entries: [string, string][]) => {
      try {
        q(entries);
      } catch (err) {
        return err as ProxmoxError;
      }
      throw new Error('accepted');
    };
    expect(fail([]).errors).toEqual({ timeframe: 'property is missing and it is not optional' });
    const bad = fail([['timeframe', 'minute']]);
    expect(bad.status).toBe(400);
    expect(bad.errors).toEqual({
      timeframe: "value 'minute' does not have a value in the enumeration 'hour, day, week, month, year'",
    });
    expect(
      fail([
        ['timeframe', 'hour'],
        ['cf', 'MIN'],
      ]).errors,
    ).toEqual({
      cf: "value 'MIN' does not have a value in the enumeration 'AVERAGE, MAX'",
    });
  });
});

describe('rrd points', () => {
  it('gives a VM cpu as a fraction of its vCPUs, time in seconds, and leaves out what was not measured', () => {
    expect(
      vmRrd(
        [
          { t: 1_700_000_015_500, cpu: 500, mem: 1024, netin: 10, diskwrite: 3 },
          { t: 1_700_000_030_000, cpu: 9000 },
        ],
        { vcpus: 2, maxmem: 4096 },
      ),
    ).toEqual([
      { time: 1_700_000_015, cpu: 0.25, maxcpu: 2, mem: 1024, maxmem: 4096, netin: 10, diskwrite: 3 },
      { time: 1_700_000_030, cpu: 1, maxcpu: 2, maxmem: 4096 },
    ]);
    expect(vmRrd([], { vcpus: 1, maxmem: 1 })).toEqual([]);
  });

  it('gives a node the VM sums over its cores with memused/memtotal', () => {
    expect(nodeRrd([{ t: 2000, cpu: 4000, mem: 8, netout: 5 }], { cores: 16, memtotal: 64 })).toEqual([
      { time: 2, cpu: 0.25, maxcpu: 16, memused: 8, mem: 8, memtotal: 64, maxmem: 64, netout: 5 },
    ]);
  });
});
