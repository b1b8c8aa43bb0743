import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { scavengeWhileRelaying } from './stream-gc';

// Vitest's workers run without --expose-gc; give this test process the `gc` the launchers expose (test-only trick).
beforeAll(() => {
  const g = globalThis as { gc?: unknown };
  if (typeof g.gc !== 'function') {
    setFlagsFromString('--expose-gc');
    g.gc = runInNewContext('gc') as unknown;
  }
});

/** Minor (scavenge) collections V8 reports while `work` runs. */
async function scavengesDuring(work: () => void): Promise<number> {
  const seen: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  work();
  await new Promise((r) => setTimeout(r, 50)); // gc entries are delivered asynchronously
  observer.disconnect();
  // Node's gc entries carry `detail.kind`; the DOM typing of PerformanceEntry that TypeScript also sees lacks it.
  const kindOf = (e: PerformanceEntry) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
  return seen.filter((e) => kindOf(e) === constants.NODE_PERFORMANCE_GC_MINOR).length;
}

describe('scavengeWhileRelaying', () => {
  it('asks V8 for a scavenge each time `every` bytes have passed, not before', async () => {
    const chunk = Buffer.alloc(1024);
    const relay = scavengeWhileRelaying(4096);
    const beforeThreshold = await scavengesDuring(() => {
      for (let i = 0; i < 3; i++) relay(chunk);
    });
    const afterFiveThresholds = await scavengesDuring(() => {
      for (let i = 0; i < 1 + 5 * 4; i++) relay(chunk);
    });
    expect(afterFiveThresholds).toBeGreaterThanOrEqual(5);
    expect(afterFiveThresholds).toBeGreaterThan(beforeThreshold);
  });
});
