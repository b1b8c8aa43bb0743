/**
 * Shared pieces of the fault suite: an open live.fleet subscription over SSE (what the UI holds), the process's
 * open file descriptors and the TCP connections to the embedded cluster's port, and a counter of the API requests
 * the embedded cluster receives.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FleetEvent } from '@/server/schemas/live';
import type { EmbeddedCluster } from '@/sim/index';
import { eventually, readTrackedEvents, type Harness } from '../server/harness';

/** The live.fleet SSE stream as a browser holds it, folded into the state the UI shows. */
export class LiveClient {
  readonly events: FleetEvent[] = [];
  /** What the UI's "cluster unreachable" banner is fed from: the snapshot's `ready`, then each `ready` event. */
  ready: boolean | undefined;
  readonly vms = new Map<string, { tags: string[]; status: string }>();
  private readonly abort = new AbortController();
  private pump: Promise<void> = Promise.resolve();

  static async open(h: Harness): Promise<LiveClient> {
    const c = new LiveClient();
    const res = await fetch(`${h.url}/trpc/live.fleet`, {
      signal: c.abort.signal,
      headers: { accept: 'text/event-stream' },
    });
    if (!res.ok || !res.body) throw new Error(`live.fleet answered ${res.status}`);
    c.pump = readTrackedEvents<FleetEvent>(res.body, (_id, event) => c.apply(event));
    await eventually(() => c.ready !== undefined, 5000, 'live snapshot');
    return c;
  }

  private apply(e: FleetEvent): void {
    this.events.push(e);
    if (e.type === 'snapshot') {
      this.ready = e.ready;
      this.vms.clear();
      for (const vm of e.vms) this.vms.set(`${vm.namespace}/${vm.name}`, { tags: vm.tags, status: vm.status });
    } else if (e.type === 'ready') this.ready = e.ready;
    else if (e.type === 'vm' && e.op === 'upsert')
      this.vms.set(`${e.vm.namespace}/${e.vm.name}`, { tags: e.vm.tags, status: e.vm.status });
    else if (e.type === 'vm' && e.op === 'delete') this.vms.delete(`${e.namespace}/${e.name}`);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.pump;
  }
}

/** Open file descriptors of this process (the test runs Corral and the embedded cluster in-process). */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/** TCP connections from or to `port` on loopback that are not closed yet (TIME_WAIT and LISTEN excluded). */
export function socketsOnPort(port: number): number {
  let n = 0;
  for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      const state = f[3];
      if (state === '06' || state === '0A') continue;
      if (local === port || remote === port) n++;
    }
  }
  return n;
}

/** Counts the API requests (not /_sim control calls) the embedded cluster receives, by path. */
export function countRequests(sim: EmbeddedCluster): { total: () => number; paths: string[]; reset: () => void } {
  const paths: string[] = [];
  const decide = sim.faults.decide.bind(sim.faults);
  sim.faults.decide = ((...args: Parameters<typeof decide>) => {
    paths.push(args[0]);
    return decide(...args);
  }) as typeof decide;
  return { total: () => paths.length, paths, reset: () => void paths.splice(0) };
}

/** Share of one core this process used over the next `ms` (user + system time). */
export async function cpuShare(ms: number): Promise<number> {
  const start = process.cpuUsage();
  const t0 = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / (performance.now() - t0);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
