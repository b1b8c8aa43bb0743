/**
 * Cumulative network and disk byte counters per running VM, as Proxmox reports them (`netin`, `netout`, `diskread`,
 * `diskwrite`: bytes since the VM started). Kubernetes hands Corral rates, not QEMU's counters, so the counters are
 * the metrics store's rates integrated over time: after every recorded round, each VM's newest rates × the seconds
 * since it was last counted. A VM "starts" with its VirtualMachineInstance: a new VMI uid starts from 0 again, as a
 * new QEMU process does on a Proxmox node (a VM that already ran when Corral started is counted from Corral's first
 * sampling round: its earlier traffic is unknown). A round without metrics (metrics-server away, or a VM not measured)
 * adds nothing, so the counters never go down. They are estimates: each rate is taken as constant over the interval
 * it was measured for. Sits beside the store and reads each round's raw readings through its `onRecord` hook (one
 * map lookup per measured VM per round, nothing per request).
 */
import type { DomainDeps } from './deps';
import type { VmReading } from './metrics-store';
import { asArray, asDict, asString, vmiActive } from './vm-facts';

export interface IoTotals {
  netin: number;
  netout: number;
  diskread: number;
  diskwrite: number;
}

const ZERO: Readonly<IoTotals> = Object.freeze({ netin: 0, netout: 0, diskread: 0, diskwrite: 0 });

/** The slice of the metrics store the counters read: each recorded round's raw readings. */
export interface RateSource {
  onRecord(listener: (t: number, readings: readonly VmReading[]) => void): () => void;
}

interface Entry {
  namespace: string;
  name: string;
  /** The VMI's uid: another one means the VM was started again. */
  uid: string;
  /** Epoch ms up to which this VM has been counted. */
  t: number;
  /** The round that last counted it. */
  round: number;
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

/** A rate as the store received it, 0 when not measured. */
const rate = (v: number | undefined): number => (v !== undefined && v > 0 ? v : 0);

export class IoCounters {
  private readonly byVm = new Map<string, Entry>();
  /** Time of the previous round (0 before the first). */
  private lastRound = 0;
  private rounds = 0;
  private readonly stop: () => void;

  constructor(
    private readonly deps: DomainDeps,
    source: RateSource,
  ) {
    this.stop = source.onRecord((t, readings) => this.round(t, readings));
  }

  close(): void {
    this.stop();
    this.byVm.clear();
  }

  /** Adds one round at `t` (epoch ms) for every VM measured in it; forgets VMs whose instance is gone or replaced. */
  round(t: number, readings: readonly VmReading[]): void {
    const previous = this.lastRound;
    if (t <= previous) return;
    this.lastRound = t;
    const round = ++this.rounds;
    const cache = this.deps.cluster.cache;
    for (const r of readings) {
      const key = `${r.namespace}/${r.name}`;
      const vmi = cache.get('VirtualMachineInstance', r.namespace, r.name);
      if (!vmi || !vmiActive(vmi)) continue;
      const uid = vmi.metadata.uid ?? '';
      let entry = this.byVm.get(key);
      if (!entry || entry.uid !== uid) {
        // Counted from the later of the previous round and the instance's start (the first rates cover at most
        // that); a VM already running at Corral's first round is counted from that round.
        const from = Math.max(previous || t, runningSince(vmi));
        entry = { namespace: r.namespace, name: r.name, uid, t: from, round, totals: { ...ZERO } };
        this.byVm.set(key, entry);
      }
      const seconds = Math.max(0, (t - entry.t) / 1000);
      const totals = entry.totals;
      const reading = r.reading;
      totals.netin += rate(reading.netin) * seconds;
      totals.netout += rate(reading.netout) * seconds;
      totals.diskread += rate(reading.diskread) * seconds;
      totals.diskwrite += rate(reading.diskwrite) * seconds;
      entry.t = t;
      entry.round = round;
    }
    // A VM not measured in this round keeps its count while its instance lives; a stopped or restarted one is dropped.
    for (const [key, entry] of this.byVm) {
      if (entry.round === round) continue;
      const vmi = cache.get('VirtualMachineInstance', entry.namespace, entry.name);
      if (!vmi || !vmiActive(vmi) || (vmi.metadata.uid ?? '') !== entry.uid) this.byVm.delete(key);
    }
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
