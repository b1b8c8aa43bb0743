import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    include: ['src/**/*.test.ts', 'tests/**/*.test.ts'],
    exclude: ['tests/e2e/**', 'node_modules/**'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine. Most integration
    // files spend their time waiting on the embedded cluster's clock (the 60 s hang test, Ansible's playbooks),
    // so two files at once keep both cores busy and halve the wall time there. Every file starts its own
    // cluster and server on free ports, so files do not share state.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
