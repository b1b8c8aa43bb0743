/**
 * The Datacenter's first screen inside its server-rendered HTML (docs/scale.md, "First rows from the HTML").
 *
 * At 50,000 VMs the first rows used to wait for the page's scripts: download, evaluation, hydration, then the
 * `GET /api/vms?limit=200` answer and a render. Now the root layout renders them on the server: Corral marks a
 * document request for `/` with a request header naming this server's first-screen source, and the layout (a
 * server component in the same process) calls that source, which answers from the fleet's cached first page
 * (vm-first-page.ts, once per fleet version). The rows travel to the browser as HTML and as the layout's props, so
 * hydration renders exactly what the server rendered and the whole list follows as before.
 *
 * The UI may import only types from the server, so the two meet through a process-wide registry under a
 * `Symbol.for` key and a header name, both spelled the same in src/app/lib/first-screen.ts. The header carries an id
 * per Corral (not a flag) so several Corrals in one process each answer with their own fleet; whatever a client
 * sent under that header is removed first.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { listCts } from '../domain/ct-rows';
import { registryOf } from '../domain/registry';
import type { CorralServices } from '../domain/services';
import type { CtRow } from '../schemas/cts';
import type { NodeRow } from '../schemas/nodes';
import type { VmRow } from '../schemas/vms';

/** The request header the layout reads; its value is the id of the source to call. */
export const FIRST_SCREEN_HEADER = 'x-corral-first-screen';

/** Where the sources live: `globalThis[FIRST_SCREEN_SOURCES]`, a Map from id to source. */
export const FIRST_SCREEN_SOURCES = Symbol.for('corral.firstScreenSources');

/** What the layout renders the Datacenter with before any script runs. */
export interface FirstScreenSeed {
  /** The first `limit` VMs in the table's order (name, natural order, then namespace). */
  vms: VmRow[];
  /** The whole list's counts (vm-first-page.ts): VMs, templates among them, running VMs that are not templates. */
  total: number;
  templates: number;
  running: number;
  nodes: NodeRow[];
  cts: CtRow[];
}

export type FirstScreenSource = (limit: number) => FirstScreenSeed;
export type FirstScreenSources = Map<string, FirstScreenSource>;

function sources(): FirstScreenSources {
  const g = globalThis as unknown as Record<typeof FIRST_SCREEN_SOURCES, FirstScreenSources | undefined>;
  g[FIRST_SCREEN_SOURCES] ??= new Map();
  return g[FIRST_SCREEN_SOURCES];
}

/** The first screen of every cluster `services` belongs to (their registry), from the cached first page. */
export function firstScreenOf(services: CorralServices, limit: number): FirstScreenSeed {
  const registry = registryOf(services);
  const page = registry.vmFirstPage(limit);
  return {
    vms: page.rows,
    total: page.total,
    templates: page.templates,
    running: page.running,
    // The same rows as `GET /api/nodes` and `GET /api/cts`.
    nodes: registry.rows(undefined, (s) => s.nodes.list()),
    cts: registry.rows(undefined, (s) => listCts(s.deps)),
  };
}

/**
 * Registers `services`' first screen and returns how to mark requests for it: `mark` sets the header on a document
 * request for `/` (not Next's RSC requests of a client-side navigation, whose layout is already on the page) and
 * removes it from every other request; `close` unregisters.
 */
export function firstScreenRoute(services: CorralServices): {
  mark: (req: IncomingMessage) => void;
  close: () => void;
} {
  const id = randomUUID();
  sources().set(id, (limit) => firstScreenOf(services, limit));
  return {
    mark: (req) => {
      delete req.headers[FIRST_SCREEN_HEADER];
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/' && req.headers.rsc === undefined) req.headers[FIRST_SCREEN_HEADER] = id;
    },
    close: () => void sources().delete(id),
  };
}
