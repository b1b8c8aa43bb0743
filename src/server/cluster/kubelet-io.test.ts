import { describe, expect, it } from 'vitest';
import type { KubeHttp, KubeRequest } from './kube-http';
import { CounterRates, KubeletIo, parseCadvisor, parseSummary, parseVolumes } from './kubelet-io';

const T0 = Date.parse('2026-12-01T10:00:00Z');

describe('kubelet Summary API', () => {
  it('reads each pod network counters, summed over its interfaces, at the kubelet timestamp', () => {
    const body = {
      node: { nodeName: 'n1' },
      pods: [
        {
          podRef: { name: 'virt-launcher-web-x', namespace: 'tailvm', uid: 'u1' },
          network: {
            time: '2026-12-01T10:00:00Z',
            name: 'eth0',
            rxBytes: 100,
            txBytes: 50,
            interfaces: [
              { name: 'eth0', rxBytes: 100, txBytes: 50 },
              { name: 'net1', rxBytes: 1000, txBytes: 10 },
            ],
          },
        },
        { podRef: { name: 'plain', namespace: 'kube-system' }, network: { rxBytes: 7, txBytes: 8 } },
        { podRef: { name: 'host-network', namespace: 'x' } },
      ],
    };
    const pods = parseSummary(body, 42);
    expect(pods.get('tailvm/virt-launcher-web-x')).toEqual({ t: T0, a: 1100, b: 60 });
    expect(pods.get('kube-system/plain')).toEqual({ t: 42, a: 7, b: 8 });
    expect(pods.has('x/host-network')).toBe(false);
    expect(parseSummary('not json', 0).size).toBe(0);
  });
});

describe('kubelet Summary API volumes', () => {
  it('reads used and capacity bytes of claim-backed volumes only, keyed by the claim', () => {
    const body = {
      pods: [
        {
          podRef: { name: 'box', namespace: 'tailvm' },
          volume: [
            {
              name: 'data',
              usedBytes: 4096,
              capacityBytes: 2147483648,
              pvcRef: { name: 'box-data', namespace: 'tailvm' },
            },
            { name: 'kube-api-access', usedBytes: 12, capacityBytes: 100 },
            { name: 'odd', usedBytes: 'x', capacityBytes: 10, pvcRef: { name: 'odd' } },
            { name: 'zero', usedBytes: 0, capacityBytes: 0, pvcRef: { name: 'zero' } },
          ],
        },
        {
          podRef: { name: 'other', namespace: 'ns2' },
          volume: [{ usedBytes: 1, capacityBytes: 2, pvcRef: { name: 'c' } }],
        },
        { podRef: { name: 'none', namespace: 'x' } },
      ],
    };
    const volumes = parseVolumes(body);
    expect(volumes.get('tailvm/box-data')).toEqual({ usedBytes: 4096, capacityBytes: 2147483648 });
    expect(volumes.get('ns2/c')).toEqual({ usedBytes: 1, capacityBytes: 2 }); // the pod's namespace when pvcRef has none
    expect(volumes.size).toBe(2);
    expect(parseVolumes(undefined).size).toBe(0);
  });
});

describe('cAdvisor text', () => {
  it('sums reads and writes over containers and devices, skipping the pod cgroup line', () => {
    const text = [
      '# HELP container_fs_reads_bytes_total Cumulative count of bytes read',
      '# TYPE container_fs_reads_bytes_total counter',
      `container_fs_reads_bytes_total{container="",device="/dev/sda",namespace="tailvm",pod="web-x"} 999999 ${T0}`,
      `container_fs_reads_bytes_total{container="compute",device="/dev/sda",namespace="tailvm",pod="web-x"} 1000 ${T0}`,
      `container_fs_reads_bytes_total{container="compute",device="/dev/sdb",namespace="tailvm",pod="web-x"} 24 ${T0}`,
      `container_fs_reads_bytes_total{container="POD",device="/dev/sda",namespace="tailvm",pod="web-x"} 5 ${T0}`,
      `container_fs_writes_bytes_total{container="compute",device="/dev/sda",namespace="tailvm",pod="web-x"} 2.5e+03 ${T0}`,
      'container_fs_reads_bytes_total{container="app",image="a\\"b,c=d",namespace="ns",pod="p"} 3',
      'container_cpu_usage_seconds_total{container="compute",namespace="tailvm",pod="web-x"} 12',
      'container_fs_reads_bytes_total{container="broken',
    ].join('\n');
    const pods = parseCadvisor(text, 77);
    expect(pods.get('tailvm/web-x')).toEqual({ t: T0, a: 1024, b: 2500 });
    expect(pods.get('ns/p')).toEqual({ t: 77, a: 3, b: 0 }); // escaped quote and comma inside a label value
    expect(pods.size).toBe(2);
  });
});

describe('counter rates', () => {
  it('divides growth by elapsed time, gives none for a first reading or a counter that went down', () => {
    const rates = new CounterRates();
    const at = (t: number, a: number, b: number) => new Map([['p', { t: T0 + t, a, b }]]);
    expect(rates.update(at(0, 1000, 0)).size).toBe(0); // nothing to compare with
    expect(rates.update(at(15_000, 16_000, 1500)).get('p')).toEqual([1000, 100]);
    // The kubelet served the same reading again: keep the last rate rather than report 0 then double.
    expect(rates.update(at(15_000, 16_000, 1500)).get('p')).toEqual([1000, 100]);
    // A restart reset the counter: no rate (not negative, not a spike) ...
    expect(rates.update(at(30_000, 200, 10)).has('p')).toBe(false);
    // ... and the next interval is measured from the new base.
    expect(rates.update(at(45_000, 3200, 40)).get('p')).toEqual([200, 2]);
  });
});

describe('kubelet reads per round', () => {
  it('asks each node once per endpoint and leaves a refused endpoint absent', async () => {
    const calls: string[] = [];
    let round = 0;
    const http = {
      request: (req: KubeRequest) => {
        calls.push(req.path);
        if (req.path.startsWith('/api/v1/nodes/n2/')) return Promise.reject(new Error('403 forbidden: nodes/proxy'));
        if (req.path.endsWith('/stats/summary'))
          return Promise.resolve({
            pods: [
              {
                podRef: { namespace: 'tailvm', name: 'web-x' },
                network: { time: new Date(T0 + round * 10_000).toISOString(), rxBytes: round * 10_000, txBytes: 0 },
                // Round 0 mounts a claim; by round 1 the pod no longer does.
                volume:
                  round === 0 ? [{ name: 'd', usedBytes: 10, capacityBytes: 100, pvcRef: { name: 'web-data' } }] : [],
              },
            ],
          });
        return Promise.reject(new Error('404 not found'));
      },
    } as unknown as KubeHttp;
    const io = new KubeletIo(http);
    await io.sample(['n1', 'n2']);
    expect(calls.sort()).toEqual([
      '/api/v1/nodes/n1/proxy/metrics/cadvisor',
      '/api/v1/nodes/n1/proxy/stats/summary',
      '/api/v1/nodes/n2/proxy/metrics/cadvisor',
      '/api/v1/nodes/n2/proxy/stats/summary',
    ]);
    expect(io.pod('tailvm', 'web-x')).toBeUndefined();
    expect(io.volume('tailvm', 'web-data')).toEqual({ usedBytes: 10, capacityBytes: 100 });
    round = 1;
    await io.sample(['n1', 'n2']);
    // 10,000 bytes in 10 s; cAdvisor answered 404, so the disk fields are absent rather than 0.
    expect(io.pod('tailvm', 'web-x')).toEqual({ netin: 1000, netout: 0 });
    expect(calls).toHaveLength(8);
    expect(io.volume('tailvm', 'web-data')).toBeUndefined(); // no longer mounted: unknown, not a stale reading
  });
});
