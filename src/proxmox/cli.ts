/**
 * `corral proxmox serve [--addr :8006] [--cert FILE --key FILE] [--token GRANTS] [--kubeconfig FILE] [--context NAME]`
 * — the Proxmox VE API on its own port, over Corral's cluster layer and services (no web UI). bin/corral.mjs
 * runs this file with the project's Node 24 + tsx. `--token` (or CORRAL_PROXMOX_TOKEN) holds the token grants;
 * without one the API answers only on loopback. `--token generate` prints a fresh UUID-shaped secret.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { KubeCluster, loadKubeConfig } from '@/server/cluster';
import { createCorralServices } from '@/server/domain/services';
import { isLoopback } from './auth/authenticate';
import { parseGrants, TokenConfigError } from './auth/tokens';
import { createProxmoxHandler } from './handler';
import { parseAddr, serveProxmox } from './serve';

export const USAGE = `usage: corral proxmox serve [--addr [HOST]:PORT] [--cert FILE --key FILE] [--token GRANTS]
                           [--kubeconfig FILE] [--context NAME]

  --addr         listen address (default :8006)
  --cert, --key  PEM certificate and key: serve HTTPS (TLS 1.2/1.3; Terraform's bpg/proxmox and proxmoxer need it)
  --token        API token grants, comma separated: SECRET | user@realm!name=SECRET, each optionally :Role
                 (Administrator, Operator, Viewer, NoAccess). Default: $CORRAL_PROXMOX_TOKEN.
                 Without any, only loopback callers are served. '--token generate' prints a new secret.
  --kubeconfig   kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --context      kubeconfig context (default: current-context)`;

export interface ServeArgs {
  addr: string;
  cert?: string;
  key?: string;
  token?: string;
  kubeconfig?: string;
  context?: string;
}

export class UsageError extends Error {}

export function parseServeArgs(argv: string[]): ServeArgs {
  const args: ServeArgs = { addr: ':8006' };
  const flags = new Map<string, keyof ServeArgs>([
    ['--addr', 'addr'],
    ['--cert', 'cert'],
    ['--key', 'key'],
    ['--token', 'token'],
    ['--kubeconfig', 'kubeconfig'],
    ['--context', 'context'],
  ]);
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] ?? '';
    const [flag, inline] = raw.includes('=')
      ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)]
      : [raw, undefined];
    const key = flags.get(flag);
    if (!key) throw new UsageError(`unknown option '${raw}'`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
    args[key] = value;
  }
  if (!!args.cert !== !!args.key) throw new UsageError('--cert and --key go together');
  return args;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'serve') {
    console.error(
      command === undefined || command === '--help' || command === '-h'
        ? USAGE
        : `unknown proxmox command '${command}'\n\n${USAGE}`,
    );
    return command === '--help' || command === '-h' ? 0 : 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  let args: ServeArgs;
  try {
    args = parseServeArgs(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (args.token === 'generate') {
    console.log(randomUUID());
    return 0;
  }
  let grants;
  try {
    grants = parseGrants(args.token ?? process.env.CORRAL_PROXMOX_TOKEN);
  } catch (err) {
    if (err instanceof TokenConfigError) {
      console.error(`corral proxmox: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const { host, port } = parseAddr(args.addr);
  const tls =
    args.cert && args.key ? { cert: readFileSync(args.cert, 'utf8'), key: readFileSync(args.key, 'utf8') } : undefined;

  const kubeConfig = loadKubeConfig({
    ...(args.kubeconfig ? { file: args.kubeconfig } : {}),
    ...(args.context ? { context: args.context } : {}),
  });
  const cluster = new KubeCluster(kubeConfig, {});
  await cluster.cache.start();
  cluster.metrics.start(); // VM/node cpu and mem come from this metrics.k8s.io sample
  cluster.cache.waitForSync(60_000).catch((err: unknown) => console.warn(`[corral proxmox] ${String(err)}`));
  const services = createCorralServices(cluster);
  const proxmox = createProxmoxHandler({ services, grants });
  const serving = await serveProxmox({ handle: proxmox.handle, host, port, ...(tls ? { tls } : {}) });
  console.log(
    `[corral proxmox] serving the Proxmox VE API at ${serving.url}/api2/json for ${cluster.info.context || 'the cluster'}`,
  );
  if (grants.length === 0) {
    console.log(
      `[corral proxmox] no token configured: only loopback callers are served${isLoopback(host) ? '' : ' (other hosts get 403 with instructions)'}; set --token or CORRAL_PROXMOX_TOKEN`,
    );
  }
  if (!tls) console.log('[corral proxmox] plain HTTP: proxmoxer and Terraform need HTTPS (--cert/--key)');
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await serving.close();
  proxmox.close();
  services.close();
  await cluster.stop();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`corral proxmox: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
