/**
 * The Corral process: `corral web` and `npm start` land here.
 *   --demo              run against the embedded demo cluster, started in this process (npm start does this)
 *   --kubeconfig FILE   a kubeconfig file (default: KUBECONFIG, in-cluster service account, ~/.kube/config)
 *   --context NAME      a context of that kubeconfig; repeat it to serve several clusters at once (the first is the default)
 *   --all-contexts      serve every context of the kubeconfig
 *   --kubeconfig-dir DIR  also serve every context of every kubeconfig file in DIR (a mounted Secret)
 *   --demo-clusters N   with --demo: how many embedded clusters (default 2: home with the demo fleet, lab with 3 VMs)
 *   --port N            listen port (default PORT or 8006)
 *   --host ADDR         listen address (default 0.0.0.0)
 *   --open              without CORRAL_ADMINS, let callers from other machines change state too
 *   --cert FILE --key FILE  PEM certificate and key: serve HTTPS (TLS 1.2/1.3) instead of HTTP
 *   --metrics           collect the Prometheus series GET /metrics serves (--metrics-interval SECONDS, default 15)
 *   --kube-qps N --kube-burst N  client-side rate limit of every request to the cluster (default 50 / 100)
 *   --help              usage; an unknown flag or a bad value prints usage and exits 2
 * NODE_ENV=production serves the built UI (building it first when .next/BUILD_ID is missing); otherwise Next dev.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { PveHostConfig } from './src/server/pve-client/client.js';
import { parsePveHosts } from './src/server/pve-client/config.js';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `Corral needs Node >= 22.19 (running ${process.versions.node}). Use the project's runtime: npm start, npx corral, or ./node_modules/.bin/node --import tsx server.ts`,
  );
  process.exit(1);
}

const root = dirname(fileURLToPath(import.meta.url));

const USAGE = `usage: corral web [options]

  --demo              run against the embedded demo cluster (no Kubernetes needed)
  --kubeconfig FILE   kubeconfig to use (default: $KUBECONFIG, in-cluster config, ~/.kube/config)
  --context NAME      kubeconfig context (default: current-context); repeat to serve several clusters,
                      the first being the default for requests that name none
  --all-contexts      serve every context of the kubeconfig
  --kubeconfig-dir DIR
                      also serve every context of each kubeconfig file in DIR (e.g. a Secret mounted
                      there beside the in-cluster config)
  --demo-clusters N   with --demo: embedded clusters to start, 1 – 8 (default 2: home, lab)
  --port N            listen port (default $PORT or 8006)
  --host ADDR         listen address (default $HOST or 0.0.0.0, every interface)
  --open              without CORRAL_ADMINS, callers from other machines may change state too
                      (default: only callers on this machine may; also CORRAL_OPEN=1)
  --cert, --key       PEM certificate and key: serve HTTPS, TLS 1.3 available (proxmoxer and Terraform need it)
  --no-ui             serve the API only
  --metrics           collect the Prometheus series served at GET /metrics (also CORRAL_METRICS=1);
                      without it /metrics answers corral_collection_success 0
  --metrics-interval SECONDS
                      how often the /metrics snapshot is rebuilt (default 15, 1 – 3600)
  --kube-qps N        requests per second Corral sends the cluster, all users together, shared fairly
                      between them (default $CORRAL_KUBE_QPS or 50; 0 = unlimited)
  --kube-burst N      requests allowed at once after a quiet spell (default $CORRAL_KUBE_BURST or 100)
  --pve NAME=URL      a Proxmox VE host VMs can be moved to (repeatable); its API token in
                      CORRAL_PVE_<NAME>_TOKEN (user@realm!tokenid=secret) or ..._TOKEN_FILE, optional
                      CORRAL_PVE_<NAME>_CA (PEM file) or CORRAL_PVE_<NAME>_INSECURE=1 (docs/move.md)
  --help              this text

Security settings (CORRAL_ADMINS, CORRAL_TRUSTED_PROXIES, CORRAL_ALLOWED_HOSTS, limits): docs/security.md`;

function usageError(message: string): never {
  console.error(`corral web: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseCommandLine() {
  try {
    return parseArgs({
      args: process.argv.slice(2).filter((a) => a !== 'web'),
      options: {
        demo: { type: 'boolean', default: process.env.CORRAL_DEMO === '1' },
        kubeconfig: { type: 'string' },
        context: { type: 'string', multiple: true },
        'all-contexts': { type: 'boolean', default: false },
        'kubeconfig-dir': { type: 'string' },
        'demo-clusters': { type: 'string', default: '2' },
        port: { type: 'string', default: process.env.PORT ?? '8006' },
        host: { type: 'string', default: process.env.HOST ?? '0.0.0.0' },
        open: { type: 'boolean', default: /^(1|true|yes)$/i.test(process.env.CORRAL_OPEN ?? '') },
        'no-ui': { type: 'boolean', default: false },
        metrics: { type: 'boolean', default: /^(1|true|yes)$/i.test(process.env.CORRAL_METRICS ?? '') },
        'metrics-interval': { type: 'string' },
        'kube-qps': { type: 'string', default: process.env.CORRAL_KUBE_QPS },
        'kube-burst': { type: 'string', default: process.env.CORRAL_KUBE_BURST },
        pve: { type: 'string', multiple: true },
        cert: { type: 'string' },
        key: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    // parseArgs explains unknown flags and missing values well; the stack trace adds nothing.
    return usageError(err instanceof Error ? err.message : String(err));
  }
}

const { values } = parseCommandLine();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const port = Number(values.port);
if (!/^\d+$/.test(values.port) || !Number.isInteger(port) || port > 65535)
  usageError(`--port: not a port number: ${values.port}`);
const dev = process.env.NODE_ENV !== 'production';

function metricsInterval(): number | undefined {
  const raw = values['metrics-interval'];
  if (raw === undefined) return undefined;
  if (!values.metrics) usageError('--metrics-interval needs --metrics');
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds < 1 || seconds > 3600)
    usageError(`--metrics-interval: not a whole number of seconds from 1 to 3600: ${raw}`);
  return seconds * 1000;
}
const metricsIntervalMs = metricsInterval();

const demoClusters = Number(values['demo-clusters']);
if (!/^\d+$/.test(values['demo-clusters']) || demoClusters < 1 || demoClusters > 8)
  usageError(`--demo-clusters: not a whole number from 1 to 8: ${values['demo-clusters']}`);
if (values['all-contexts'] && values.context) usageError('--all-contexts and --context exclude each other');

/** `--pve NAME=URL` with its token from the environment, checked before anything starts. */
function pveHosts(): PveHostConfig[] {
  try {
    return parsePveHosts(values.pve ?? []);
  } catch (err) {
    return usageError(err instanceof Error ? err.message : String(err));
  }
}
const pve = pveHosts();

/** Every regular file in `dir` (a mounted Secret: one kubeconfig per key; Kubernetes' ..data links are skipped). */
function kubeconfigsIn(dir: string | undefined): string[] {
  if (!dir) return [];
  try {
    return readdirSync(dir)
      .filter((f) => !f.startsWith('.'))
      .map((f) => join(dir, f))
      .filter((f) => statSync(f).isFile())
      .sort();
  } catch (err) {
    return usageError(`--kubeconfig-dir ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

if (!!values.cert !== !!values.key) usageError('--cert and --key go together');
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
  const { parseRateLimit } = await import('./src/server/cluster/rate-limiter.js');
  let kubeRateLimit;
  try {
    kubeRateLimit = parseRateLimit(
      { qps: values['kube-qps'], burst: values['kube-burst'] },
      { qps: '--kube-qps', burst: '--kube-burst' },
    );
  } catch (err) {
    usageError(err instanceof Error ? err.message : String(err));
  }
  ensureBuilt();
  const closers: (() => Promise<void>)[] = [];
  const { clusterSources } = await import('./src/server/clusters.js');
  let sources: { kube: { yaml?: string; file?: string; context?: string }; demo?: boolean; clusterName?: string }[];
  if (values.demo) {
    // The embedded clusters are a separate program that happens to share this process; src/server never imports it.
    // Two by default, so the multi-cluster tree, pools across clusters and moves can be tried at once.
    const sim = await import('./src/sim/index.js');
    // Schedule Jobs run Corral's own image: the embedded kubelet runs it in this process (docs/schedules.md).
    const { corralContainerRuntime } = await import('./src/server/tools/schedule-runtime.js');
    sources = [];
    for (let i = 0; i < demoClusters; i++) {
      const contextName = i === 0 ? 'home' : i === 1 ? 'lab' : `lab${i}`;
      const cluster = await sim.startEmbeddedCluster({
        port: 0,
        fleet: i === 0 ? 'demo' : 3,
        speed: 1,
        contextName,
        containerRuntime: corralContainerRuntime(),
      });
      closers.push(() => cluster.close());
      console.log(`[corral] embedded cluster ${contextName} at ${cluster.url}`);
      sources.push({ kube: { yaml: cluster.kubeconfig }, demo: true, clusterName: `embedded cluster ${contextName}` });
    }
  } else {
    try {
      sources = clusterSources({
        ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
        contexts: values.context ?? [],
        allContexts: values['all-contexts'],
        extraKubeconfigs: kubeconfigsIn(values['kubeconfig-dir']),
      });
    } catch (err) {
      usageError(err instanceof Error ? err.message : String(err));
    }
  }
  const [first, ...moreClusters] = sources;
  if (!first) usageError('--all-contexts: the kubeconfig has no contexts');
  const { startCorral } = await import('./src/server/start.js');
  const corral = await startCorral({
    kube: first.kube,
    ...(first.clusterName ? { clusterName: first.clusterName } : {}),
    moreClusters,
    demo: values.demo,
    port,
    host: values.host,
    open: values.open,
    kubeRateLimit,
    next: values['no-ui'] ? false : { dev, dir: root },
    ...(values.metrics ? { prometheus: { intervalMs: metricsIntervalMs } } : {}),
    ...(tls ? { tls } : {}),
    ...(pve.length ? { pveHosts: pve } : {}),
  });
  // SIGTERM (a rolling update, a drain) stops gracefully: readiness first, then the listener, running tasks, the
  // journal (docs/deploy.md, "Upgrades"). In a pod the drain delay defaults to 5 s so the Service stops sending first.
  const inPod = !!process.env.KUBERNETES_SERVICE_HOST;
  const msFromEnv = (key: string, fallback: number) => {
    const raw = process.env[key]?.trim();
    const n = raw ? Number(raw) : fallback;
    return Number.isInteger(n) && n >= 0 ? n : fallback;
  };
  let graceful = false;
  closers.unshift(() =>
    graceful
      ? corral.shutdown({
          drainDelayMs: msFromEnv('CORRAL_DRAIN_DELAY_MS', inPod ? 5_000 : 0),
          graceMs: msFromEnv('CORRAL_SHUTDOWN_GRACE_MS', 25_000),
        })
      : corral.close(),
  );
  const where = corral.registry
    .all()
    .map((s) => (values.demo ? s.cluster.info.context : `${s.cluster.info.context} (${s.cluster.info.server})`))
    .join(', ');
  // localhost whenever this machine can use it (tools and benches read the port from this line).
  const shownHost = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(values.host)
    ? 'localhost'
    : values.host;
  console.log(`[corral] listening on ${tls ? 'https' : 'http'}://${shownHost}:${corral.port} — ${where}`);
  console.log(`[corral] ${corral.accessMode}`);
  if (pve.length)
    console.log(`[corral] move destinations on Proxmox VE: ${pve.map((h) => `${h.name} (${h.url})`).join(', ')}`);
  console.log(
    corral.prometheus
      ? `[corral] Prometheus series at /metrics, rebuilt every ${corral.prometheus.intervalMs / 1000} s`
      : '[corral] /metrics is not collecting (start with --metrics)',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    graceful = signal === 'SIGTERM';
    console.log(`[corral] ${signal}: shutting down${graceful ? ' gracefully' : ''}`);
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
