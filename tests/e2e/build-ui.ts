// Builds the UI for the e2e tests and the UI bench. `next build` type-checks the whole repository, so one type
// error in any module (another part's test file, say) would stop every UI test; type checking is
// `npm run typecheck`'s job. Next's two-phase build (compile, then generate) is the same build without that step.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export function buildUi(root: string): void {
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
