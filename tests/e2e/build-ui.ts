// Builds the UI for the e2e tests, the image test and the UI bench. `next build` type-checks the whole repository,
// so one type error in any module (another part's test file, say) would stop every UI test; type checking is
// `npm run typecheck`'s job. Next's two-phase build (compile, then generate) is the same build without that step.
//
// A build that is still fresh is reused: when .next/BUILD_ID is newer than every file the build reads (src,
// public, the configs and the lock file), building again would produce the same UI, so CI can build once before
// vitest (for the image test) and Playwright's setup reuses it. CORRAL_UI_REBUILD=1 always builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What `next build` reads, relative to the repository root: directories walked whole, and single files. */
const INPUTS = ['src', 'public', 'next.config.mjs', 'tsconfig.json', 'package.json', 'package-lock.json'];

/** The newest modification time (ms) under `path`; 0 when it does not exist. */
function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its directory's time
  for (const entry of readdirSync(path, { withFileTypes: true }))
    newest = Math.max(newest, newestMtime(join(path, entry.name)));
  return newest;
}

/** Why the UI must be built now, or undefined when .next is a complete build newer than every input. */
export function staleReason(root: string): string | undefined {
  if (process.env.CORRAL_UI_REBUILD === '1') return 'CORRAL_UI_REBUILD=1';
  const id = join(root, '.next', 'BUILD_ID');
  if (!existsSync(id)) return 'no build yet';
  // The generate phase writes the prerender manifest after the build id: an older or missing one means the last
  // build was cut short.
  const manifest = join(root, '.next', 'prerender-manifest.json');
  const built = statSync(id).mtimeMs;
  if (!existsSync(manifest) || statSync(manifest).mtimeMs < built) return 'the last build did not finish';
  const changed = INPUTS.find((input) => newestMtime(join(root, input)) > built);
  return changed ? `${changed} changed since the last build` : undefined;
}

export function buildUi(root: string): void {
  const reason = staleReason(root);
  if (!reason) {
    console.log('[build-ui] .next is newer than every input: reusing it');
    return;
  }
  console.log(`[build-ui] building the UI (${reason})`);
  const next = join(root, 'node_modules', '.bin', 'next');
  for (const mode of ['compile', 'generate']) {
    const r = spawnSync(next, ['build', '--experimental-build-mode', mode], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'production' },
    });
    if (r.status !== 0) throw new Error(`next build (${mode}) failed`);
  }
}

// `node --import tsx tests/e2e/build-ui.ts`: build (or reuse) the UI, as CI's step before vitest would.
if (process.argv[1]?.endsWith('build-ui.ts')) buildUi(join(import.meta.dirname, '..', '..'));
