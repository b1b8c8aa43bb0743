import { describe, expect, it } from 'vitest';
import type { KubeHttp, KubeRequest } from './kube-http';
import { MetricsSampler, metricsIntervalFromEnv, parseUsage } from './metrics-sampler';

function fakeHttp(answer: (req: KubeRequest) => unknown): { http: KubeHttp; calls: string[] } {
  const calls: string[] = [];
  const http = {
    request: (req: KubeRequest) => {
      calls.push(req.path);
      return Promise.resolve().then(() => answer(req));
    },
  } as unknown as KubeHttp;
  return { http, calls };
}

describe('metrics sampling', () => {
  it('reads metrics-server units: nanocores, microcores, millicores and Ki', () => {
    expect(parseUsage({ cpu: '250000000n', memory: '1536Ki' })).toEqual({ cpuCores: 0.25, memoryBytes: 1536 * 1024 });
    expect(parseUsage({ cpu: '500u', memory: '1Mi' }).cpuCores).toBeCloseTo(0.0005, 9);
    expect(parseUsage({ cpu: '1500m', memory: '2048' })).toEqual({ cpuCores: 1.5, memoryBytes: 2048 });
    expect(parseUsage({ cpu: 'lots', memory: '' })).toEqual({ cpuCores: 0, memoryBytes: 0 });
  });

  it('holds one sample of every pod and node, and empties it when metrics.k8s.io disappears', async () => {
    let served = true;
    const { http, calls } = fakeHttp((req) => {
      if (!served || req.path.includes('/proxy/'))
        throw new Error('404 the server could not find the requested resource');
      return req.path.endsWith('/nodes')
        ? { items: [{ metadata: { name: 'n1' }, usage: { cpu: '2', memory: '1Gi' } }] }
        : {
            items: [
              {
                metadata: { namespace: 'tailvm', name: 'virt-launcher-web-x' },
                containers: [
                  { name: 'compute', usage: { cpu: '100m', memory: '512Mi' } },
                  { name: 'guest-console-log', usage: { cpu: '1m', memory: '1Mi' } },
                ],
              },
            ],
          };
    });
    const sampler = new MetricsSampler(http, 60_000);
    const rounds: boolean[] = [];
    sampler.onSample((ok) => rounds.push(ok));
    expect(await sampler.sampleNow()).toBe(true);
    // One list of each for the cluster, then one Summary and one cAdvisor read per node; a 404 there is no error.
    expect(calls).toEqual([
      '/apis/metrics.k8s.io/v1beta1/pods',
      '/apis/metrics.k8s.io/v1beta1/nodes',
      '/api/v1/nodes/n1/proxy/stats/summary',
      '/api/v1/nodes/n1/proxy/metrics/cadvisor',
    ]);
    expect(sampler.podIo('tailvm', 'virt-launcher-web-x')).toBeUndefined();
    expect(sampler.pod('tailvm', 'virt-launcher-web-x', 'compute')).toEqual({
      cpuCores: 0.1,
      memoryBytes: 512 * 2 ** 20,
    });
    expect(sampler.pod('tailvm', 'virt-launcher-web-x')?.memoryBytes).toBe(513 * 2 ** 20);
    expect(sampler.node('n1')).toEqual({ cpuCores: 2, memoryBytes: 2 ** 30 });
    expect(sampler.sampledAt()).toBeGreaterThan(0);
    // Every sample is told apart from the last, even two taken within one millisecond (readers key caches on it).
    const first = sampler.sampledAt();
    await sampler.sampleNow();
    expect(sampler.sampledAt()).toBeGreaterThan(first);
    calls.splice(4); // count only the reads below
    // Reads never call the cluster.
    sampler.pod('tailvm', 'virt-launcher-web-x');
    expect(calls).toHaveLength(4);

    served = false;
    expect(await sampler.sampleNow()).toBe(false);
    expect(sampler.pod('tailvm', 'virt-launcher-web-x')).toBeUndefined();
    expect(sampler.node('n1')).toBeUndefined();
    expect(sampler.sampledAt()).toBe(0);
    // The listeners (the metrics store) hear of every round, good or failed.
    expect(rounds).toEqual([true, true, false]);
  });

  it('takes its interval from CORRAL_METRICS_INTERVAL_MS, refusing nonsense', () => {
    expect(metricsIntervalFromEnv({})).toBe(15_000);
    expect(metricsIntervalFromEnv({ CORRAL_METRICS_INTERVAL_MS: '250' })).toBe(250);
    expect(() => metricsIntervalFromEnv({ CORRAL_METRICS_INTERVAL_MS: '5' })).toThrow(/100 to 3600000/);
    expect(() => metricsIntervalFromEnv({ CORRAL_METRICS_INTERVAL_MS: 'fast' })).toThrow(/CORRAL_METRICS_INTERVAL_MS/);
  });
});
