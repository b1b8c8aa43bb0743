'use client';
// Multiview: live, scaled, view-only VNC tiles of running VMs (the first N, or the ones picked); a click opens
// that VM's Console tab. Tiles connect with watch=1, so they never take a console from anybody. With several
// clusters every served cluster's running VMs are offered; a tile, a pick and the saved choice are keyed like the
// fleet store's rows (`namespace/name` on the default cluster, `lab//namespace/name` on lab), so namesakes on two
// clusters are two tiles, each bridged to its own cluster.
import type RFB from '@novnc/novnc';
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useDefaultContext, useVms } from '../../lib/live';
import type { VmRow } from '../../lib/model';
import { useNoVnc } from './ConsoleTab';
import { useConsoleConnection } from './use-console-connection';
import './console.css';
import { vmPageHref, vmRef } from '../../lib/cluster-links';
import { rowKey } from '../../lib/fleet-store';
import { otherCluster } from '../../lib/guest-rows';

const SIZES = [4, 6, 9, 12, 16];
const STORAGE_KEY = 'corral.multiview';

interface Saved {
  count: number;
  picked: string[];
}

/** A tile's key: its cluster in front unless it is the default one (`defaultContext`, '' with one cluster). */
export function tileKey(vm: Pick<VmRow, 'namespace' | 'name' | 'context'>, defaultContext = ''): string {
  return rowKey(vm, defaultContext);
}

/** Which tiles to show: the picked VMs that still run, else the first `count` running VMs by name. */
export function chooseTiles(running: VmRow[], picked: string[], count: number, defaultContext = ''): VmRow[] {
  const byKey = new Map(running.map((vm) => [tileKey(vm, defaultContext), vm]));
  const chosen = picked.map((k) => byKey.get(k)).filter((vm): vm is VmRow => vm !== undefined);
  return (chosen.length > 0 ? chosen : running).slice(0, count);
}

export function Multiview() {
  const vms = useVms();
  const defaultContext = useDefaultContext();
  const keyOf = useCallback((vm: VmRow) => tileKey(vm, defaultContext), [defaultContext]);
  const running = useMemo(
    () => vms.filter((vm) => vm.running).sort((a, b) => keyOf(a).localeCompare(keyOf(b))),
    [vms, keyOf],
  );
  const [saved, setSaved] = useState<Saved>({ count: 9, picked: [] });
  const [picking, setPicking] = useState(false);

  useEffect(() => {
    try {
      const raw = localStorage.getItem(STORAGE_KEY);
      if (raw) {
        const parsed = JSON.parse(raw) as Partial<Saved>;
        setSaved({
          count: SIZES.includes(parsed.count ?? 0) ? parsed.count! : 9,
          picked: Array.isArray(parsed.picked) ? parsed.picked.filter((p) => typeof p === 'string') : [],
        });
      }
    } catch {
      // A corrupt saved choice just means the default view.
    }
  }, []);
  const update = (next: Saved) => {
    setSaved(next);
    localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  };
  const tiles = chooseTiles(running, saved.picked, saved.count, defaultContext);
  const toggle = (k: string) =>
    update({ ...saved, picked: saved.picked.includes(k) ? saved.picked.filter((p) => p !== k) : [...saved.picked, k] });

  return (
    <div className="workbench" data-testid="multiview">
      <div className="page-head">
        <h1>Multiview</h1>
        <span className="page-sub">
          {tiles.length} of {running.length} running VMs · view only · click a screen to open its console
        </span>
      </div>
      <div className="multiview-controls">
        <label>
          Tiles{' '}
          <select
            value={saved.count}
            onChange={(e) => update({ ...saved, count: Number(e.target.value) })}
            aria-label="Number of tiles"
          >
            {SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="btn-small" aria-pressed={picking} onClick={() => setPicking(!picking)}>
          {picking ? 'Done choosing' : 'Choose VMs…'}
        </button>
        {saved.picked.length > 0 && (
          <button type="button" className="btn-small" onClick={() => update({ ...saved, picked: [] })}>
            Show the first {saved.count} again
          </button>
        )}
      </div>
      {picking && (
        <div className="multiview-picker" role="group" aria-label="VMs to show">
          {running.map((vm) => (
            <button
              key={keyOf(vm)}
              type="button"
              className="chip"
              aria-pressed={saved.picked.includes(keyOf(vm))}
              onClick={() => toggle(keyOf(vm))}
            >
              {otherCluster(vm.context, defaultContext) && `${otherCluster(vm.context, defaultContext)}: `}
              {vm.namespace}/{vm.name}
            </button>
          ))}
        </div>
      )}
      {running.length === 0 ? (
        <div className="panel empty">No VM is running.</div>
      ) : (
        <div className="multiview-grid">
          {tiles.map((vm) => (
            <VncTile key={keyOf(vm)} vm={vm} tile={keyOf(vm)} />
          ))}
        </div>
      )}
    </div>
  );
}

function VncTile({ vm, tile }: { vm: VmRow; tile: string }) {
  const router = useRouter();
  const defaultContext = useDefaultContext();
  const RFBClass = useNoVnc();
  const screenRef = useRef<HTMLDivElement>(null);
  const attach = useCallback(
    (ws: WebSocket) => {
      const target = screenRef.current;
      if (!RFBClass || !target) return () => undefined;
      target.replaceChildren();
      const rfb: RFB = new RFBClass(target, ws, { shared: true });
      rfb.viewOnly = true;
      rfb.scaleViewport = true;
      rfb.focusOnClick = false;
      rfb.background = 'transparent';
      return () => {
        try {
          rfb.disconnect();
        } catch {
          // Already closed.
        }
      };
    },
    [RFBClass],
  );
  const { state } = useConsoleConnection({
    kind: 'vnc',
    ...vmRef(vm),
    enabled: vm.running && RFBClass !== null,
    watch: true,
    attach,
  });
  const open = () => router.push(vmPageHref(vm, defaultContext, 'console'));
  const other = otherCluster(vm.context, defaultContext);
  const note = state.phase === 'open' ? '' : state.verdict ? state.verdict.message : 'Connecting…';
  return (
    // A div, not a button: noVNC puts its own divs and canvas inside, which a button may not contain.
    <div
      role="link"
      tabIndex={0}
      className="multiview-tile"
      onClick={open}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') open();
      }}
      title={`Open the console of ${other ? `${other}: ` : ''}${vm.namespace}/${vm.name}`}
      data-testid="multiview-tile"
      data-vm={tile}
      data-context={vm.context}
    >
      <span className="multiview-tile-head">
        <strong>{vm.name}</strong>
        <span className="page-sub">{other ? `${other} · ${vm.namespace}` : vm.namespace}</span>
      </span>
      <div className="multiview-tile-screen">
        <div ref={screenRef} />
        {note && <span className="multiview-tile-state">{note}</span>}
      </div>
    </div>
  );
}
