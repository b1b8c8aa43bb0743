// The REST prefill of the live fleet (plain-JSON `/api/vms`, `/api/nodes` and `/api/cts`), started as early as possible.
//
// At thousands of VMs the VM list is megabytes; asked for by a React effect it would wait for every script to
// load and the page to hydrate. So the root layout's <head> runs EARLY_PREFILL_SCRIPT, which starts the
// requests while the HTML is still parsing, and the live provider picks the answers up with takePrefill().
//
// On the Datacenter (`/`) the script also asks for a first screen: the first FIRST_PAGE VMs in the table's order
// (`?limit=`), which renders long before 50,000 rows are transferred and parsed. The whole VM list is parsed only
// after that first screen is on the page (a 17 MB JSON.parse would otherwise hold the first paint back).
//
// Each list answer carries the live feed's position it was read at (`Corral-Live-Position`); the stream resumes from
// the earliest of them instead of sending the fleet a second time (docs/scale.md).
import type { CtRow, NodeRow, VmRow } from './model';

export const PREFILL_PATHS = { vms: '/api/vms', nodes: '/api/nodes', cts: '/api/cts' } as const;

/** VMs in the first screen: more than any table or tree shows before scrolling. */
export const FIRST_PAGE = 200;

/** The header the lists carry the live feed's position in (server: domain/live-resume.ts). */
export const POSITION_HEADER = 'corral-live-position';

/** The window property the early script leaves its requests on. */
export const EARLY_PREFILL_KEY = '__corralPrefill';

/** A list's rows and the live position it was read at (null when the server did not say). */
export interface Listed<T> {
  rows: T[];
  position: string | null;
}

/** The headers the first page carries the whole list's counts in (server: domain/vm-first-page.ts). */
export const TOTAL_HEADER = 'corral-vm-total';
export const TEMPLATES_HEADER = 'corral-vm-templates';
export const RUNNING_HEADER = 'corral-vm-running';

/** The first page's rows and the whole list's counts (null when the server did not say). */
export interface FirstPageAnswer {
  rows: VmRow[];
  total: number | null;
  templates: number | null;
  running: number | null;
}

/** What the early script parks: the VM list unparsed, the small lists parsed, the first page on `/` only. */
export interface EarlyPrefill {
  vms: Promise<Response>;
  nodes: Promise<Listed<NodeRow>>;
  cts: Promise<Listed<CtRow>>;
  first?: Promise<FirstPageAnswer>;
}

export interface Prefill {
  vms: VmRow[];
  nodes: NodeRow[];
  cts: CtRow[];
  /** Where the live stream resumes: the earliest of the lists' positions, undefined when one is unknown. */
  position?: string;
}

/**
 * The first screen: the first page of VMs with every node and CT, and when known the whole list's counts as the
 * Datacenter counts (templates apart): VMs that are not templates, and how many of them run.
 */
export interface FirstScreen {
  vms: VmRow[];
  nodes: NodeRow[];
  cts: CtRow[];
  counts?: { total: number; running: number };
}

type PrefillWindow = Record<typeof EARLY_PREFILL_KEY, EarlyPrefill | undefined>;

const parses = new WeakMap<EarlyPrefill, Promise<Prefill>>();

/** Fetches one list; a non-2xx answer is an error naming the path and status. */
async function request(path: string, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(path, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res;
}

async function listed<T>(res: Response): Promise<Listed<T>> {
  return { rows: (await res.json()) as T[], position: res.headers.get(POSITION_HEADER) };
}

/**
 * Inline, dependency-free JavaScript for <head>: the same requests as takePrefill's own, parked on window (each
 * rejection handled, so a failed prefill is not an "unhandled rejection" in the console). On the Datacenter the
 * first page is asked for first, so the server answers it before it builds the whole list's answer — unless
 * `firstPage` is false: the server rendered the first screen into the HTML already (lib/first-screen.ts).
 */
export function earlyPrefillScript(firstPage: boolean): string {
  const h = (name: string) => `n(r,${JSON.stringify(name)})`;
  const first = firstPage
    ? `if(w.location&&w.location.pathname==='/')e.first=g(${JSON.stringify(`${PREFILL_PATHS.vms}?limit=${FIRST_PAGE}`)}).then(function(r){return r.json().then(function(x){return{rows:x,total:${h(TOTAL_HEADER)},templates:${h(TEMPLATES_HEADER)},running:${h(RUNNING_HEADER)}}})});`
    : '';
  return `try{var w=window,o={headers:{accept:'application/json'}},g=function(p){return fetch(p,o).then(function(r){if(!r.ok)throw new Error(p+': '+r.status);return r})},n=function(r,k){var v=r.headers.get(k);return v===null||v===''||isNaN(+v)?null:+v},j=function(p){return g(p).then(function(r){return r.json().then(function(x){return{rows:x,position:r.headers.get(${JSON.stringify(POSITION_HEADER)})}})})},e={};${first}e.vms=g(${JSON.stringify(PREFILL_PATHS.vms)});e.nodes=j(${JSON.stringify(PREFILL_PATHS.nodes)});e.cts=j(${JSON.stringify(PREFILL_PATHS.cts)});for(var k in e)e[k].catch(function(){});w[${JSON.stringify(EARLY_PREFILL_KEY)}]=e}catch(x){}`;
}

/** The early script of a page without a server-rendered first screen. */
export const EARLY_PREFILL_SCRIPT = earlyPrefillScript(true);

/**
 * The earliest of the lists' positions (`<epoch>-<seq>`, server: live-feed.ts): every list was read at or after
 * it, so the changes after it bring them all up to date. Undefined when one is missing or they name different
 * epochs (a server restarted between two answers): then the stream opens with a snapshot.
 */
export function earliestPosition(positions: readonly (string | null | undefined)[]): string | undefined {
  let best: { epoch: string; seq: number; id: string } | undefined;
  for (const id of positions) {
    const cut = id ? id.lastIndexOf('-') : -1;
    if (!id || cut <= 0) return undefined;
    const epoch = id.slice(0, cut);
    const seq = Number(id.slice(cut + 1));
    if (!Number.isSafeInteger(seq) || (best && best.epoch !== epoch)) return undefined;
    if (!best || seq < best.seq) best = { epoch, seq, id };
  }
  return best?.id;
}

/**
 * The prefill: the early script's requests when it ran, fresh ones otherwise (no first page then). `lists(after)`
 * parses the VM list once `after` has settled (the first screen painted). The early requests stay available until
 * `release()` — React's development double-mount runs the effect twice and both runs must find them — and are
 * released once applied, so a later provider (after a full remount) asks the server again.
 */
export function takePrefill(
  signal: AbortSignal,
  win: Partial<PrefillWindow> = globalThis as unknown as Partial<PrefillWindow>,
): { first?: Promise<FirstScreen>; lists: (after?: Promise<unknown>) => Promise<Prefill>; release: () => void } {
  const early = win[EARLY_PREFILL_KEY];
  const requests: EarlyPrefill = early ?? {
    vms: request(PREFILL_PATHS.vms, signal),
    nodes: request(PREFILL_PATHS.nodes, signal).then((r) => listed<NodeRow>(r)),
    cts: request(PREFILL_PATHS.cts, signal).then((r) => listed<CtRow>(r)),
  };
  const lists = (after?: Promise<unknown>) => {
    // The VM answer's body can be read once: every run of a double-mounted effect shares one parse.
    let parsed = parses.get(requests);
    if (!parsed) {
      parsed = (async () => {
        const [vmsRes, nodes, cts] = await Promise.all([requests.vms, requests.nodes, requests.cts]);
        await after;
        const vms = await listed<VmRow>(vmsRes);
        const position = earliestPosition([vms.position, nodes.position, cts.position]);
        return { vms: vms.rows, nodes: nodes.rows, cts: cts.rows, ...(position ? { position } : {}) };
      })();
      parses.set(requests, parsed);
    }
    return parsed;
  };
  const first = requests.first;
  const release = early ? () => void (win[EARLY_PREFILL_KEY] = undefined) : () => undefined;
  if (!first) return { lists, release };
  return {
    first: Promise.all([first, requests.nodes, requests.cts]).then(([page, nodes, cts]) => ({
      vms: page.rows,
      nodes: nodes.rows,
      cts: cts.rows,
      ...(page.total !== null && page.templates !== null && page.running !== null
        ? { counts: { total: page.total - page.templates, running: page.running } }
        : {}),
    })),
    lists,
    release,
  };
}
