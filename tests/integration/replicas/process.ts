/**
 * Corral replicas as separate processes (server.ts, API only) for the two-replica tests: start one on a kubeconfig
 * with its own POD_NAME and environment, wait for its URL and /readyz, and keep its output for failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

export interface Replica {
  name: string;
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output: string[];
}

export interface LaunchOptions {
  name: string;
  kubeconfig: string;
  /** Extra server.ts flags. */
  args?: string[];
  /** Extra environment (lease length, flush and share intervals, …). */
  env?: Record<string, string>;
}

/**
 * Starts a replica and adds it to `started` as soon as it listens (so an afterAll can stop it even when it never
 * turns ready), then waits for /readyz 200.
 */
export async function launchReplica(started: Replica[], options: LaunchOptions): Promise<Replica> {
  const { name } = options;
  const args = ['--import', 'tsx', 'server.ts', '--kubeconfig', options.kubeconfig, '--no-ui', '--port', '0'];
  args.push('--host', '127.0.0.1', ...(options.args ?? []));
  const child = spawn(`${root}node_modules/.bin/node`, args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', POD_NAME: name, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output.join('')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const m = /listening on (http:\/\/[^\s]+)/.exec(output.join(''));
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1].replace('localhost', '127.0.0.1'));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
    void exited.then(() => reject(new Error(`${name} exited:\n${output.join('')}`)));
  });
  const replica = { name, child, url, exited, output };
  started.push(replica);
  await until(`${name} ready`, async () => (await fetch(`${url}/readyz`)).status === 200, 30_000);
  return replica;
}

/** Polls `probe` every 50 ms until it gives a truthy value (a rejection counts as not yet). */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
