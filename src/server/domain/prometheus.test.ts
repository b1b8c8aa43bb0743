import { describe, expect, it } from 'vitest';
import { FakeCluster, makeVm, makeVmi } from '../testing/fake-cluster';
import type { MetricsReadings, ResourceUsage } from './cluster-port';
import type { DomainDeps } from './deps';
import { collectionOffText, PrometheusCollector, type PoolLookup } from './prometheus';
import { escapeHelp, escapeLabelValue, ExpositionWriter, formatValue, labelText } from './prometheus-text';
import { TaskJournal } from './tasks';
import { FleetView } from './vm-rows';

describe('exposition writer', () => {
  it('escapes backslash, double quote and newline in label values, and only those', () => {
    expect(escapeLabelValue('plain-name_1.2')).toBe('plain-name_1.2');
    expect(escapeLabelValue('a\\b"c\nd\te')).toBe('a\\\\b\\"c\\nd\te');
    expect(labelText([['context', 'we"ird\\ctx\nline']])).toBe('{context="we\\"ird\\\\ctx\\nline"}');
    expect(labelText([])).toBe('');
  });

  it('escapes backslash and newline in HELP, leaving quotes alone', () => {
    expect(escapeHelp('pool="" is \\ungrouped\nall')).toBe('pool="" is \\\\ungrouped\\nall');
  });

  it('spells special values the way Prometheus parses them', () => {
    expect([NaN, Infinity, -Infinity, 3, 0.25, 1e21].map(formatValue)).toEqual([
      'NaN',
      '+Inf',
      '-Inf',
      '3',
      '0.25',
      '1e+21',
    ]);
  });

  it('refuses invalid metric and label names and a family written twice', () => {
    const w = new ExpositionWriter();
    expect(() => w.family('corral-bad', 'gauge', 'x')).toThrow(/invalid Prometheus metric name/);
    expect(() => w.family('9lives', 'gauge', 'x')).toThrow(/invalid Prometheus metric name/);
    expect(() => labelText([['bad-label', 'x']])).toThrow(/invalid Prometheus label name/);
    expect(() => labelText([['__reserved', 'x']])).toThrow(/invalid Prometheus label name/);
    w.family('corral_ok', 'gauge', 'x');
    expect(() => w.family('corral_ok', 'gauge', 'x')).toThrow(/written twice/);
    expect(() => new ExpositionWriter().sample('', 1)).toThrow(/family first/);
  });

  it('writes HELP and TYPE once, then the samples', () => {
    const text = new ExpositionWriter()
      .family('corral_tasks_total', 'counter', 'Tasks')
      .sample(labelText([['action', 'start']]), 2)
      .text();
    expect(text).toBe(
      '# HELP corral_tasks_total Tasks\n# TYPE corral_tasks_total counter\ncorral_tasks_total{action="start"} 2\n',
    );
  });
});

/** A fake cluster with a metrics sample, and a context name that needs every escape. */
class MeteredCluster extends FakeCluster {
  override readonly info = {
    name: 'fake',
    context: 'ctx "a"\\b\nc',
    contexts: ['ctx "a"\\b\nc'],
    server: 'http://fake',
    demo: true,
  };
  problems: string[] = [];
  readonly usage = new Map<string, ResourceUsage>();
  readonly metrics: MetricsReadings = {
    pod: (namespace, name) => this.usage.get(`${namespace}/${name}`),
    node: () => undefined,
    sampledAt: () => (this.usage.size ? 1 : 0),
  };
  readinessProblems(): string[] {
    return this.problems;
  }
}

function launcher(vm: string, node = 'corral-1') {
  return {
    metadata: {
      name: `virt-launcher-${vm}-abcde`,
      namespace: 'tailvm',
      labels: { 'kubevirt.io': 'virt-launcher', 'corral.dev/vm': vm },
    },
    spec: { nodeName: node },
    status: { phase: 'Running' },
  };
}

function setup(journalCapacity = 500, pools?: PoolLookup) {
  const cluster = new MeteredCluster();
  const journal = new TaskJournal(journalCapacity);
  const fleet = new FleetView(cluster);
  const deps: DomainDeps = {
    cluster,
    journal,
    fleet,
    config: { defaultNamespace: 'tailvm', pollMs: 10, waitTimeoutMs: 1000 },
  };
  let now = 1_000_000;
  const collector = new PrometheusCollector(deps, {
    now: () => now,
    log: () => undefined,
    ...(pools ? { pools } : {}),
  });
  return {
    cluster,
    journal,
    fleet,
    deps,
    collector,
    advance: (ms: number) => (now += ms),
    scrape: () => {
      const { fleet, collection } = collector.render();
      return fleet.toString('utf8') + collection;
    },
  };
}

const ctx = 'context="ctx \\"a\\"\\\\b\\nc"';

describe('the Prometheus collector', () => {
  it('renders each instance with its labels, usage only where measured, and states that sum to the fleet', async () => {
    const t = setup();
    const running = { status: { printableStatus: 'Running', ready: true } };
    t.cluster.put('VirtualMachine', makeVm('web', 'tailvm', running));
    t.cluster.put('VirtualMachineInstance', makeVmi('web'));
    t.cluster.put('Pod', launcher('web'));
    t.cluster.usage.set('tailvm/virt-launcher-web-abcde', { cpuCores: 0.25, memoryBytes: 1073741824 });
    // Running but never measured: no usage series at all, never a made-up 0.
    t.cluster.put('VirtualMachine', makeVm('db', 'tailvm', { status: { printableStatus: 'Starting' } }));
    t.cluster.put('VirtualMachineInstance', makeVmi('db', 'tailvm', { nodeName: 'corral-2' }));
    t.cluster.put(
      'VirtualMachine',
      makeVm('img', 'tailvm', {
        metadata: {
          labels: { 'corral.dev/template': 'true' },
          annotations: { 'corral.dev/source': JSON.stringify({ bootc: 'quay.io/x/os:1' }) },
        },
      }),
    );
    await t.collector.collectNow();
    const text = t.scrape();
    const base = (name: string) => `{name="${name}",backend="kubevirt",${ctx},namespace="tailvm",pool=""}`;
    for (const line of [
      `corral_backend_up{${ctx},backend="kubevirt"} 1`,
      `corral_backend_error{${ctx},backend="kubevirt"} 0`,
      `corral_instance_info{name="web",backend="kubevirt",${ctx},namespace="tailvm",pool="",node="corral-1",template="false",bootc="false"} 1`,
      `corral_instance_info{name="img",backend="kubevirt",${ctx},namespace="tailvm",pool="",node="",template="true",bootc="true"} 1`,
      `corral_instance_running${base('web')} 1`,
      `corral_instance_running${base('img')} 0`,
      `corral_instance_ready${base('web')} 1`,
      `corral_instance_ready${base('db')} 0`,
      `corral_instance_cpu_cores${base('web')} 0.25`,
      `corral_instance_memory_bytes${base('web')} 1073741824`,
      `corral_instances{backend="kubevirt",${ctx},state="ready"} 1`,
      `corral_instances{backend="kubevirt",${ctx},state="running"} 1`,
      `corral_instances{backend="kubevirt",${ctx},state="stopped"} 1`,
      'corral_pool_instances{pool=""} 3',
      'corral_pool_running{pool=""} 2',
      'corral_collection_success 1',
    ])
      expect(text.split('\n')).toContain(line);
    expect(text).not.toMatch(/corral_instance_(cpu_cores|memory_bytes)\{name="(db|img)"/);
    // Declared, without rows: there is no doctor to report checks.
    expect(text).toContain('# TYPE corral_check gauge\n# HELP corral_tasks_total');
  });

  it('labels instances with their pool and counts every pool, empty ones too, beside the ungrouped', async () => {
    const membership = new Map([['tailvm/web', 'apps/front end']]);
    const paths = ['apps', 'apps/front end'];
    const t = setup(500, { poolOf: (ns, name) => membership.get(`${ns}/${name}`) ?? '', paths: () => paths });
    t.cluster.put('VirtualMachine', makeVm('web', 'tailvm', { status: { printableStatus: 'Running', ready: true } }));
    t.cluster.put('VirtualMachineInstance', makeVmi('web'));
    t.cluster.put('VirtualMachine', makeVm('db'));
    await t.collector.collectNow();
    let lines = t.scrape().split('\n');
    expect(lines).toContain(
      `corral_instance_running{name="web",backend="kubevirt",${ctx},namespace="tailvm",pool="apps/front end"} 1`,
    );
    expect(lines).toContain(
      `corral_instance_running{name="db",backend="kubevirt",${ctx},namespace="tailvm",pool=""} 0`,
    );
    for (const line of [
      'corral_pool_instances{pool=""} 1',
      'corral_pool_instances{pool="apps"} 0',
      'corral_pool_instances{pool="apps/front end"} 1',
      'corral_pool_running{pool=""} 0',
      'corral_pool_running{pool="apps/front end"} 1',
    ])
      expect(lines).toContain(line);
    // Filing db changes no VM object: its lines are re-rendered because its pool changed.
    membership.set('tailvm/db', 'apps');
    await t.collector.collectNow();
    lines = t.scrape().split('\n');
    expect(lines).toContain(
      `corral_instance_running{name="db",backend="kubevirt",${ctx},namespace="tailvm",pool="apps"} 0`,
    );
    expect(lines).toContain('corral_pool_instances{pool="apps"} 1');
    expect(lines).toContain('corral_pool_instances{pool=""} 0');
  });

  it('serves the snapshot, not the live cache: a change shows only after the next collection', async () => {
    const t = setup();
    await t.collector.collectNow();
    t.cluster.put('VirtualMachine', makeVm('late'));
    expect(t.scrape()).toContain('corral_pool_instances{pool=""} 0');
    await t.collector.collectNow();
    expect(t.scrape()).toContain('corral_pool_instances{pool=""} 1');
  });

  it('walks a fleet larger than one slice completely, one collection at a time', async () => {
    const t = setup();
    for (let i = 0; i < 1234; i++) t.cluster.put('VirtualMachine', makeVm(`vm-${String(i).padStart(4, '0')}`));
    const first = t.collector.collectNow();
    expect(t.collector.collectNow()).toBe(first); // a second call joins the collection in flight
    expect(await first).toBe(true);
    const text = t.scrape();
    expect(text.match(/^corral_instance_info\{/gm)).toHaveLength(1234);
    expect(text).toContain('corral_pool_instances{pool=""} 1234');
    expect(text).toContain('corral_instance_running{name="vm-1233",');
  });

  it('reports an unreachable cluster as down with its last-known instances, not as empty', async () => {
    const t = setup();
    t.cluster.put('VirtualMachine', makeVm('web'));
    t.cluster.ready = false;
    t.cluster.problems = ['VirtualMachine watch: connect ECONNREFUSED'];
    await t.collector.collectNow();
    const text = t.scrape();
    expect(text).toContain(`corral_backend_up{${ctx},backend="kubevirt"} 0`);
    expect(text).toContain(`corral_backend_error{${ctx},backend="kubevirt"} 1`);
    expect(text).toContain('corral_pool_instances{pool=""} 1');
  });

  it('ages the snapshot honestly when the collector is stopped or failing', async () => {
    const t = setup();
    expect(t.scrape()).toContain('corral_collection_success 0');
    expect(t.scrape()).not.toMatch(/^corral_collection_age_seconds /m);
    await t.collector.collectNow();
    t.advance(2500);
    expect(t.scrape()).toMatch(/^corral_collection_age_seconds 2.5$/m);
    t.cluster.put('VirtualMachine', makeVm('web'));
    // Every later attempt fails: the last good snapshot stays, marked unsuccessful, and keeps ageing.
    t.fleet.vmRows = () => {
      throw new Error('boom');
    };
    t.advance(10_000);
    expect(await t.collector.collectNow()).toBe(false);
    const text = t.scrape();
    expect(text).toMatch(/^corral_collection_age_seconds 12.5$/m);
    expect(text).toContain('corral_collection_success 0');
    expect(text).toContain('corral_pool_instances{pool=""} 0');
  });

  it('counts finished tasks by action and outcome, and the counter outlives the bounded journal', async () => {
    const t = setup(2);
    for (let i = 0; i < 3; i++) t.journal.start('start', `tailvm/vm-${i}`, 'alice').done();
    t.journal.start('delete', 'tailvm/x', 'alice').fail(new Error('nope'));
    const running = t.journal.start('migrate', 'tailvm/y', 'alice');
    running.log('still going');
    await t.collector.collectNow();
    let text = t.scrape();
    expect(text).toContain('corral_tasks_total{action="delete",status="error"} 1');
    expect(text).toContain('corral_tasks_total{action="start",status="done"} 3');
    expect(text).not.toContain('action="migrate"');
    running.done();
    running.fail(new Error('a finished task does not finish twice'));
    await t.collector.collectNow();
    text = t.scrape();
    expect(text).toContain('corral_tasks_total{action="migrate",status="done"} 1');
    expect(text).not.toContain('action="migrate",status="error"');
    t.collector.close();
  });

  it('without --metrics answers only that nothing is collected', () => {
    expect(collectionOffText()).toBe(
      '# HELP corral_collection_success 1 when the last collection succeeded; 0 when it failed, has not run, or ' +
        'collection is off (no --metrics)\n# TYPE corral_collection_success gauge\ncorral_collection_success 0\n',
    );
  });
});
