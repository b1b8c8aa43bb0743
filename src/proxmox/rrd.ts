/**
 * PVE's `rrddata` views over the metrics store's history points. PVE keeps RRD archives per timeframe (hour, day,
 * week, month, year) and consolidation function (AVERAGE, MAX); Corral keeps three rings of averages: hour (one
 * point per sampling round), day (5 min) and week (30 min). So `month` and `year` serve the week ring (the longest
 * held), and `cf=MAX` serves the same averages (the store keeps no maxima; an hour point is one sample, where
 * both are the same). Field names and units are PVE's: `time` epoch seconds, `cpu` a fraction of `maxcpu`, memory
 * in bytes, network and disk in bytes/s. A series the cluster does not measure is left out of the point, never 0.
 */
import type { HistoryPoint, HistoryWindow } from '@/server/schemas/metrics';
import type { Params } from './params';
import { paramError } from './wire';

export const RRD_TIMEFRAMES = ['hour', 'day', 'week', 'month', 'year'] as const;
export type RrdTimeframe = (typeof RRD_TIMEFRAMES)[number];
export const RRD_CFS = ['AVERAGE', 'MAX'] as const;
export type RrdCf = (typeof RRD_CFS)[number];

/** The store window each PVE timeframe reads. */
export const WINDOW_OF_TIMEFRAME: Record<RrdTimeframe, HistoryWindow> = {
  hour: 'hour',
  day: 'day',
  week: 'week',
  month: 'week',
  year: 'week',
};

function oneOf<T extends string>(args: Params, key: string, allowed: readonly T[], fallback?: T): T {
  const raw = args.string(key);
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw paramError({ [key]: 'property is missing and it is not optional' });
  }
  if (!(allowed as readonly string[]).includes(raw))
    throw paramError({ [key]: `value '${raw}' does not have a value in the enumeration '${allowed.join(', ')}'` });
  return raw as T;
}

/** `timeframe` (required) and `cf` (default AVERAGE) as PVE validates them: a 400 naming the parameter. */
export function rrdQuery(args: Params): { timeframe: RrdTimeframe; cf: RrdCf; window: HistoryWindow } {
  const timeframe = oneOf(args, 'timeframe', RRD_TIMEFRAMES);
  const cf = oneOf(args, 'cf', RRD_CFS, 'AVERAGE');
  return { timeframe, cf, window: WINDOW_OF_TIMEFRAME[timeframe] };
}

const RATES = ['netin', 'netout', 'diskread', 'diskwrite'] as const;

function rates(p: HistoryPoint, out: Record<string, number>): Record<string, number> {
  for (const k of RATES) {
    const v = p[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A VM's points: `cpu` is millicores over its vCPUs (capped at 1, as PVE's is). */
export function vmRrd(
  points: readonly HistoryPoint[],
  vm: { vcpus: number; maxmem: number },
): Record<string, number>[] {
  const vcpus = Math.max(1, vm.vcpus);
  return points.map((p) => {
    const out: Record<string, number> = {
      time: Math.floor(p.t / 1000),
      cpu: Math.min(1, p.cpu / 1000 / vcpus),
      maxcpu: vcpus,
    };
    if (p.mem !== undefined) out.mem = p.mem;
    out.maxmem = vm.maxmem;
    return rates(p, out);
  });
}

/**
 * A node's points: the sums over the VMs that run on it now (the store's node series), `cpu` over the node's
 * cores. Memory appears under both PVE node names (`memused`/`memtotal`) and the VM-style `mem`/`maxmem`.
 */
export function nodeRrd(
  points: readonly HistoryPoint[],
  node: { cores: number; memtotal: number },
): Record<string, number>[] {
  const cores = Math.max(1, node.cores);
  return points.map((p) => {
    const out: Record<string, number> = {
      time: Math.floor(p.t / 1000),
      cpu: Math.min(1, p.cpu / 1000 / cores),
      maxcpu: cores,
    };
    if (p.mem !== undefined) {
      out.memused = p.mem;
      out.mem = p.mem;
    }
    out.memtotal = node.memtotal;
    out.maxmem = node.memtotal;
    return rates(p, out);
  });
}
