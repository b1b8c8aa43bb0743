/**
 * The Corral process: `corral web` and `npm start` land here.
 *   --demo              run against the embedded demo cluster, started in this process (npm start does this)
 *   --kubeconfig FILE   a kubeconfig file (default: KUBECONFIG, in-cluster service account, ~/.kube/config)
 *   --context NAME      a context of that kubeconfig
 *   --port N            listen port (default PORT or 8006)
 *   --host ADDR         listen address (default 0.0.0.0)
 *   --cert FILE --key FILE  PEM certificate and key: serve HTTPS (TLS 1.2/1.3) instead of HTTP
 * NODE_ENV=production serves the built UI (building it first when .next/BUILD_ID is missing); otherwise Next dev.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `Corral needs Node >= 22.19 (running ${process.versions.node}). Use the project's runtime: npm start, npx corral, or ./node_modules/.bin/node --import tsx server.ts`,
  );
  process.exit(1);
}

const root = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== 'web'),
  options: {
    demo: { type: 'boolean', default: process.env.CORRAL_DEMO === '1' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    port: { type: 'string', default: process.env.PORT ?? '8006' },
    host: { type: 'string', default: process.env.HOST ?? '0.0.0.0' },
    'no-ui': { type: 'boolean', default: false },
    cert: { type: 'string' },
    key: { type: 'string' },
  },
  strict: true,
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: not a port number: ${values.port}`);
  process.exit(2);
}
const dev = process.env.NODE_ENV !== 'production';

if (!!values.cert !== !!values.key) {
  console.error('--cert and --key go together');
  process.exit(2);
}
function readPem(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    console.error(`${flag} ${file}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}
const tls =
  values.cert && values.key ? { cert: readPem('--cert', values.cert), key: readPem('--key', values.key) } : undefined;

function ensureBuilt(): void {
  if (dev || values['no-ui'] || existsSync(join(root, '.next', 'BUILD_ID'))) return;
  console.log('[corral] building the web UI (first start)…');
  const next = join(root, 'node_modules', '.bin', 'next');
  const r = spawnSync(next, ['build'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) {
    console.error('[corral] next build failed; fix the build or run with --no-ui for the API only');
    process.exit(1);
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const closers: (() => Promise<void>)[] = [];
  let kube: { yaml?: string; file?: string; context?: string };
  if (values.demo) {
    // The embedded cluster is a separate program that happens to share this process; src/server never imports it.
    const sim = await import('./src/sim/index.js');
    const cluster = await sim.startEmbeddedCluster({ port: 0, fleet: 'demo', speed: 1 });
    closers.push(() => cluster.close());
    console.log(`[corral] embedded demo cluster at ${cluster.url}`);
    kube = { yaml: cluster.kubeconfig };
  } else {
    kube = { file: values.kubeconfig, context: values.context };
  }
  const { startCorral } = await import('./src/server/start.js');
  const corral = await startCorral({
    kube,
    demo: values.demo,
    port,
    host: values.host,
    next: values['no-ui'] ? false : { dev, dir: root },
    ...(tls ? { tls } : {}),
  });
  closers.unshift(() => corral.close());
  const where = values.demo
    ? 'the embedded demo cluster'
    : `${corral.cluster.info.context} (${corral.cluster.info.server})`;
  console.log(`[corral] listening on ${tls ? 'https' : 'http'}://localhost:${corral.port} — ${where}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`[corral] ${signal}: shutting down`);
    void (async () => {
      for (const close of closers) await close().catch((err: unknown) => console.error(err));
      process.exit(0);
    })();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(`[corral] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
