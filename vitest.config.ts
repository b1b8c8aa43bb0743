import { availableParallelism } from 'node:os';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Vitest's order, with the container image test last: it needs the Debian base that .ci/run prepares in the
 * background (~5.5 min cold, mostly download) and waits for it through the cache's lock; started last, the base is
 * ready and no worker sits blocked while other files could run.
 */
class ImageTestLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const image = (f: TestSpecification) => f.moduleId.includes('/tests/integration/image/');
    return [...sorted.filter((f) => !image(f)), ...sorted.filter(image)];
  }
}

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    include: ['src/**/*.test.ts', 'tests/**/*.test.ts'],
    exclude: ['tests/e2e/**', 'node_modules/**'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine. Most integration
    // files spend much of their time waiting on the embedded cluster's clock (the 60 s hang test, Ansible's
    // playbooks, the replicas' lease periods), so one file more than the cores keeps them busy: on 2 cores three
    // workers ran the suite in 365 s where two took ~480 s. Every file starts its own cluster and server on free
    // ports, so files do not share state; tests that measure time or CPU allow for a busy machine.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: ImageTestLast },
  },
});
