/**
 * Corral as the benches run it: `server.ts --no-ui` in its own production process against a kubeconfig, so its RSS
 * and CPU are measured apart from the embedded cluster and the load generator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** `extraArgs` are more `corral web` flags (e.g. `--metrics`). */
export function startCorralProcess(
  kubeconfig: string,
  extraArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    join(root, 'node_modules', '.bin', 'node'),
    [
      '--expose-gc', // as bin/corral.mjs and npm start run it (src/server/http/stream-gc.ts)
      '--import',
      'tsx',
      join(root, 'server.ts'),
      '--no-ui',
      '--kubeconfig',
      kubeconfig,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      ...extraArgs,
    ],
    { cwd: root, env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`corral exited with ${code}: ${out}`)));
  });
}

/** Resident memory of a process in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}
