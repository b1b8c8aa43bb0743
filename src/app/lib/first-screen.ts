// The Datacenter's first screen for the server render (the root layout; server side only). Corral's server marks a
// document request for `/` with FIRST_SCREEN_HEADER, naming the source that answers from its fleet's cached first
// page; the layout passes the answer to the live provider, so the first rows are in the HTML (docs/scale.md).
// The UI imports only types from the server: the header name and the registry's key are spelled here again, the
// same as in src/server/http/first-screen.ts (first-screen.test.ts checks both spellings).
import type { FirstScreenSeed, FirstScreenSources } from '@/server/http/first-screen';

export type { FirstScreenSeed } from '@/server/http/first-screen';

export const FIRST_SCREEN_HEADER = 'x-corral-first-screen';

/**
 * VMs in the server-rendered first screen. The table's window is at most 25 rows (its scroller is at most 640 px
 * high: 19 rows and 6 overscan); 60 covers it with templates among them and fills the tree's first groups. Fewer
 * than the fetched first page (FIRST_PAGE): every row is in the HTML twice (as markup in the tree, and in the props
 * hydration reads), and at 200 the page's HTML was 261 KB (22 KB gzip) against 112 KB (12 KB gzip) at 60, with
 * the first rows ~0.7 s later on the loaded 2-core machine (docs/scale.md).
 */
export const FIRST_SCREEN_ROWS = 60;
export const FIRST_SCREEN_SOURCES = Symbol.for('corral.firstScreenSources');

/** The first screen the request's header names, or undefined (another page, or no Corral server in this process). */
export function firstScreenFor(id: string | null | undefined): FirstScreenSeed | undefined {
  if (!id) return undefined;
  const sources = (globalThis as unknown as Record<symbol, FirstScreenSources | undefined>)[FIRST_SCREEN_SOURCES];
  return sources?.get(id)?.(FIRST_SCREEN_ROWS);
}
