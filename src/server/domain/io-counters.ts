/**
 * Cumulative network and disk byte counters per running VM, as Proxmox reports them (`netin`, `netout`, `diskread`,
 * `diskwrite`: bytes since the VM started). Kubernetes hands Corral rates, not QEMU's counters, so the counters are
 * the metrics store's rates integrated over time: after every recorded round, each VM's newest rates × the seconds
 * since it was last counted. A VM "starts" with its VirtualMachineInstance: a new VMI uid starts from 0 again, as a
 * new QEMU process does on a Proxmox node (a VM that already ran when Corral started is counted from Corral's first
 * sampling round: its earlier traffic is unknown). A round without metrics (metrics-server away, or a VM not measured)
 * adds nothing, so the counters never go down; they are estimates within the store's 16-bit value precision (≤ 0.05 %
 * per round). Sits beside the store and only reads its public API (`subscribe`, `vmNow`).
 */
import type { MetricsTick, VmMetrics } from '../schemas/metrics';
import type { DomainDeps } from './deps';
import { asArray, asDict, asString, vmiActive } from './vm-facts';

export interface IoTotals {
  netin: number;
  netout: number;
  diskread: number;
  diskwrite: number;
}

const FIELDS = ['netin', 'netout', 'diskread', 'diskwrite'] as const;
const ZERO: Readonly<IoTotals> = Object.freeze({ netin: 0, netout: 0, diskread: 0, diskwrite: 0 });

/** The slice of the metrics store the counters read. */
export interface RateSource {
  subscribe(listener: (tick: MetricsTick) => void): () => void;
  vmNow(namespace: string, name: string): VmMetrics;
}

interface Entry {
  uid: string;
  /** Epoch ms up to which this VM has been counted. */
  t: number;
  totals: IoTotals;
}

/** When a VMI reached Running (epoch ms), 0 when unknown. */
function runningSince(vmi: { status?: Record<string, unknown> }): number {
  const since = asArray(asDict(vmi.status).phaseTransitionTimestamps)
    .map(asDict)
    .filter((t) => t.phase === 'Running')
    .map((t) => Date.parse(asString(t.phaseTransitionTimestamp)))
    .filter(Number.isFinite)
    .pop();
  return since ?? 0;
}

export class IoCounters {
  private readonly byVm = new Map<string, Entry>();
  /** Time of the previous good round (0 before the first). */
  private lastRound = 0;
  private readonly stop: () => void;

  constructor(
    private readonly deps: DomainDeps,
    private readonly rates: RateSource,
  ) {
    this.stop = rates.subscribe((tick) => {
      if (!tick.stale) this.round(tick.t);
    });
  }

  close(): void {
    this.stop();
    this.byVm.clear();
  }

  /** Adds one round at `t` (epoch ms) for every VM the store measured in it; forgets VMs whose instance is gone. */
  round(t: number): void {
    const previous = this.lastRound;
    if (t <= previous) return;
    this.lastRound = t;
    const live = new Set<string>();
    for (const vmi of this.deps.cluster.cache.list('VirtualMachineInstance')) {
      if (!vmiActive(vmi)) continue;
      const namespace = vmi.metadata.namespace ?? '';
      const name = vmi.metadata.name ?? '';
      const key = `${namespace}/${name}`;
      const uid = vmi.metadata.uid ?? '';
      live.add(key);
      let entry = this.byVm.get(key);
      if (!entry || entry.uid !== uid) {
        // Counted from the later of the previous round and the instance's start (the first rates cover at most
        // that); a VM already running at Corral's first round is counted from that round.
        entry = { uid, t: Math.max(previous || t, runningSince(vmi)), totals: { ...ZERO } };
        this.byVm.set(key, entry);
      }
      const now = this.rates.vmNow(namespace, name);
      if (now.t === null) continue;
      const seconds = Math.max(0, (t - entry.t) / 1000);
      for (const f of FIELDS) {
        const rate = now[f];
        if (rate !== null && rate > 0) entry.totals[f] += rate * seconds;
      }
      entry.t = t;
    }
    for (const key of this.byVm.keys()) if (!live.has(key)) this.byVm.delete(key);
  }

  /** Whole bytes since the VM's instance started; zeros for a VM that is not running or not counted yet. */
  totals(namespace: string, name: string): IoTotals {
    const entry = this.byVm.get(`${namespace}/${name}`);
    if (!entry) return { ...ZERO };
    const t = entry.totals;
    return {
      netin: Math.floor(t.netin),
      netout: Math.floor(t.netout),
      diskread: Math.floor(t.diskread),
      diskwrite: Math.floor(t.diskwrite),
    };
  }
}
