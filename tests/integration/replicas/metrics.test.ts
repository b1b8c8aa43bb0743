/**
 * Usage and /metrics with two Corral processes (server.ts, API only, --metrics) on one embedded cluster with the
 * demo fleet: only the leader samples, yet the follower shows a running VM's usage and chart series (the leader's
 * rounds reach it through the shared ConfigMap), and a Prometheus scraping both pods counts the fleet once — the
 * fleet families come from the leader alone, each replica counts only the tasks it ran. When the leader is killed
 * the survivor takes over sampling and the fleet series, and keeps the history it had mirrored.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { METRICS_SHARE_NAME } from '@/server/domain/metrics-share';
import { launchReplica, until as waitUntil, type Replica } from './process';

const LEASE_SECONDS = 2;
const SHARE_MS = 300;

let sim: EmbeddedCluster;
let dir: string;
let kubeconfig: string;
const replicas: Replica[] = [];

const launch = (name: string) =>
  launchReplica(replicas, {
    name,
    kubeconfig,
    args: ['--metrics', '--metrics-interval', '1'],
    env: {
      CORRAL_LEASE_SECONDS: String(LEASE_SECONDS),
      CORRAL_METRICS_INTERVAL_MS: '300',
      CORRAL_METRICS_SHARE_MS: String(SHARE_MS),
      CORRAL_TASK_FLUSH_MS: '100',
    },
  });
const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000) =>
  waitUntil(what, probe, timeoutMs);

const get = async <T>(r: Replica, path: string): Promise<T> => (await (await fetch(`${r.url}${path}`)).json()) as T;
const scrape = async (r: Replica) => (await fetch(`${r.url}/metrics`)).text();

/** Every sample of a family, as `labels → value`. */
function samples(text: string, family: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${family}{`) && !line.startsWith(`${family} `)) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(family.length, cut), Number(line.slice(cut + 1)));
  }
  return out;
}
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function leaderOf(pair: Replica[]): Promise<{ leader: Replica; follower: Replica }> {
  return until('exactly one replica serving as leader', async () => {
    const flags = await Promise.all(pair.map(async (r) => sum(samples(await scrape(r), 'corral_replica_leader'))));
    const i = flags.indexOf(1);
    if (flags.filter((f) => f === 1).length !== 1) return undefined;
    return { leader: pair[i]!, follower: pair[1 - i]! };
  });
}

interface VmRow {
  namespace: string;
  name: string;
  running: boolean;
}
interface VmNow {
  cpu: number | null;
  mem: number | null;
  t: number | null;
}
interface Point {
  t: number;
  cpu: number;
}

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'demo', speed: 50 });
  dir = mkdtempSync(join(tmpdir(), 'corral-replica-metrics-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfig);
}, 60_000);

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await Promise.all(replicas.map((r) => r.exited));
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('usage and /metrics on two replicas', () => {
  it('the follower shows usage and chart series; scraping both counts the fleet and each task once', async () => {
    const pair = await Promise.all([launch('metrics-a'), launch('metrics-b')]);
    const { leader, follower } = await leaderOf(pair);
    const vm = await until('a running VM', async () =>
      (await get<VmRow[]>(follower, '/api/vms')).find((r) => r.running),
    );
    const path = `/api/vms/${vm.namespace}/${vm.name}`;

    // Usage and series on the follower, which does not sample: they came from the leader's rounds.
    const now = await until('usage on the follower', async () => {
      const m = await get<VmNow>(follower, `${path}/metrics`);
      return m.cpu !== null && m.mem !== null ? m : undefined;
    });
    expect(now.cpu).toBeGreaterThan(0);
    const series = await until('three points of the VM chart on the follower', async () => {
      const points = await get<Point[]>(follower, `${path}/metrics/history?window=hour`);
      return points.length >= 3 ? points : undefined;
    });
    expect(series.every((p) => p.cpu > 0)).toBe(true);
    expect((await get<Point[]>(follower, '/api/metrics/history?window=hour')).length).toBeGreaterThan(0);
    // The shared round is one ConfigMap written by the leader, a bounded number of times.
    const cm = (await (await fetch(`${sim.url}/api/v1/namespaces/tailvm/configmaps/${METRICS_SHARE_NAME}`)).json()) as {
      metadata: { annotations: Record<string, string> };
      binaryData: Record<string, string>;
    };
    expect(cm.metadata.annotations['corral.dev/replica']).toMatch(/^metrics-[ab]-/);
    expect(Buffer.from(cm.binaryData['sample.json.gz']!, 'base64').length).toBeLessThan(64 * 1024);

    // A task run through the follower, counted once across both scrapes (the leader adopts it without counting).
    const stopped = (await get<VmRow[]>(follower, '/api/vms')).find((r) => !r.running);
    expect(stopped).toBeDefined();
    const started = await fetch(`${follower.url}/api/vms/${stopped!.namespace}/${stopped!.name}/start`, {
      method: 'POST',
    });
    expect(started.status).toBeLessThan(300);
    const counted = (text: string) =>
      sum(
        new Map(
          [...samples(text, 'corral_tasks_total')].filter(([labels]) =>
            labels.includes('action="start",status="done"'),
          ),
        ),
      );
    await until('the start task counted by the follower', async () => counted(await scrape(follower)) === 1, 20_000);

    const [leaderText, followerText] = [await scrape(leader), await scrape(follower)];
    for (const text of [leaderText, followerText]) {
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.error).toBeUndefined();
      expect(check.status, check.stderr).toBe(0);
    }
    // What `sum` over every scraped pod gives: the fleet once, the task once, exactly one leader.
    const fleet = (await get<VmRow[]>(leader, '/api/vms')).length;
    expect(sum(samples(leaderText, 'corral_instances')) + sum(samples(followerText, 'corral_instances'))).toBe(fleet);
    expect(samples(followerText, 'corral_instance_running').size).toBe(0);
    expect(samples(followerText, 'corral_instance_cpu_cores').size).toBe(0);
    expect(samples(leaderText, 'corral_instance_cpu_cores').size).toBeGreaterThan(0);
    expect(counted(leaderText) + counted(followerText)).toBe(1);
    expect(
      sum(samples(leaderText, 'corral_replica_leader')) + sum(samples(followerText, 'corral_replica_leader')),
    ).toBe(1);
    expect([...samples(followerText, 'corral_replica_leader').keys()]).toEqual([
      expect.stringMatching(/^\{replica="metrics-[ab]-[0-9a-f]{6}"\}$/),
    ]);
    expect(samples(followerText, 'corral_collection_success').get('')).toBe(1);

    // The leader dies: the survivor samples and serves the fleet series, and its chart keeps the mirrored points.
    const before = series.at(-1)!.t;
    leader.child.kill('SIGKILL');
    await leader.exited;
    await until(
      'the survivor serving the fleet series',
      async () => {
        const text = await scrape(follower);
        return sum(samples(text, 'corral_replica_leader')) === 1 && sum(samples(text, 'corral_instances')) === fleet;
      },
      6 * LEASE_SECONDS * 1000,
    );
    const after = await until('newer points on the survivor', async () => {
      const points = await get<Point[]>(follower, `${path}/metrics/history?window=hour`);
      return points.at(-1)!.t > before ? points : undefined;
    });
    expect(after.filter((p) => p.t <= before).length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
