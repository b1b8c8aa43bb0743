// The REST prefill of the live fleet (plain-JSON `/api/vms`, `/api/nodes` and `/api/cts`), started as early as possible.
//
// At thousands of VMs the VM list is megabytes; asked for by a React effect it would wait for every script to
// load and the page to hydrate. So the root layout's <head> runs EARLY_PREFILL_SCRIPT, which starts the
// requests while the HTML is still parsing, and the live provider picks the answer up with takePrefill().
import type { CtRow, NodeRow, VmRow } from './model';

export const PREFILL_PATHS = { vms: '/api/vms', nodes: '/api/nodes', cts: '/api/cts' } as const;

export type PrefillLists = [VmRow[], NodeRow[], CtRow[]];

/** The window property the early script leaves its promise on. */
export const EARLY_PREFILL_KEY = '__corralPrefill';

type PrefillWindow = Record<typeof EARLY_PREFILL_KEY, Promise<PrefillLists> | undefined>;

/** Fetches one list; a non-2xx answer is an error naming the path and status. */
export async function fetchList<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

/**
 * Inline, dependency-free JavaScript for <head>: the same requests as fetchList, with the promise parked on
 * window (its rejection handled, so a failed prefill is not an "unhandled rejection" in the console).
 */
export const EARLY_PREFILL_SCRIPT = `try{var g=function(p){return fetch(p,{headers:{accept:'application/json'}}).then(function(r){if(!r.ok)throw new Error(p+': '+r.status);return r.json()})};var q=Promise.all([g(${JSON.stringify(PREFILL_PATHS.vms)}),g(${JSON.stringify(PREFILL_PATHS.nodes)}),g(${JSON.stringify(PREFILL_PATHS.cts)})]);q.catch(function(){});window[${JSON.stringify(EARLY_PREFILL_KEY)}]=q}catch(e){}`;

/**
 * The prefill lists: the early script's requests when it ran, fresh ones otherwise. The early promise stays
 * available until `release()` — React's development double-mount runs the effect twice and both runs must find
 * it — and is released once applied, so a later provider (after a full remount) asks the server again.
 */
export function takePrefill(
  signal: AbortSignal,
  win: Partial<PrefillWindow> = globalThis as unknown as Partial<PrefillWindow>,
): { lists: Promise<PrefillLists>; release: () => void } {
  const early = win[EARLY_PREFILL_KEY];
  if (early) return { lists: early, release: () => void (win[EARLY_PREFILL_KEY] = undefined) };
  return {
    lists: Promise.all([
      fetchList<VmRow[]>(PREFILL_PATHS.vms, signal),
      fetchList<NodeRow[]>(PREFILL_PATHS.nodes, signal),
      fetchList<CtRow[]>(PREFILL_PATHS.cts, signal),
    ]),
    release: () => undefined,
  };
}
