#!/usr/bin/env node
// The `corral` command. `corral web [--port N] [--cert FILE --key FILE] [--demo] [--kubeconfig FILE] [--context NAME] [--metrics]` runs the server;
// `corral doctor [--fix] [--json]` checks the cluster (src/server/tools/doctor-cli.ts); `corral schedule run <name>`
// is one run of a snapshot or power schedule, what the schedule's CronJob runs (src/server/tools/schedule-cli.ts).
// It always runs server.ts on the project's own Node 24 (node_modules/.bin/node, from the `node` npm package)
// with tsx, because the system Node may be too old for @kubernetes/client-node 2.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [command, ...rest] = process.argv.slice(2);

const usage = `usage: corral web [--port N] [--host ADDR] [--open] [--cert FILE --key FILE] [--demo] [--kubeconfig FILE] [--context NAME] [--no-ui]
                  [--metrics [--metrics-interval SECONDS]]
       corral proxmox serve [--addr :8006] [--cert FILE --key FILE] [--token GRANTS] [--kubeconfig FILE] [--context NAME]
       corral doctor [--fix] [--json] [--kubeconfig FILE] [--context NAME] [--namespace NS]
       corral schedule run <name> [--namespace NS] [--kubeconfig FILE] [--context NAME]

  --demo              run against the embedded demo cluster (no Kubernetes needed)
  --kubeconfig FILE   kubeconfig to use (default: $KUBECONFIG, in-cluster config, ~/.kube/config)
  --context NAME      kubeconfig context (default: current-context)
  --port N            listen port (default $PORT or 8006)
  --host ADDR         listen address (default $HOST or 0.0.0.0)
  --open              without CORRAL_ADMINS, callers from other machines may change state too
  --cert, --key       PEM certificate and key: serve HTTPS, TLS 1.3 available (proxmoxer and Terraform need it)
  --no-ui             serve the API only
  --metrics           collect the Prometheus series served at GET /metrics (every 15 s, or --metrics-interval)

  corral doctor       check that the cluster has what Corral needs (exit 1 if not); --fix repairs what it can
  corral schedule run one run of a snapshot/power schedule (what its CronJob's Job runs)

  corral web --help, corral proxmox serve --help and corral doctor --help list every flag of each.`;

if (command !== 'web' && command !== 'proxmox' && command !== 'doctor' && command !== 'schedule') {
  // Asked-for help goes to stdout and exits 0; anything else is a usage error: stderr, exit 2.
  if (command === '--help' || command === '-h') {
    console.log(usage);
    process.exit(0);
  }
  console.error(command === undefined ? usage : `unknown command: ${command}\n\n${usage}`);
  process.exit(2);
}

const [major, minor] = process.versions.node.split('.').map(Number);
const projectNode = join(root, 'node_modules', '.bin', 'node');
const nodeBin = major > 22 || (major === 22 && minor >= 19) ? process.execPath : projectNode;
if (nodeBin === projectNode && !existsSync(projectNode)) {
  console.error(
    `corral needs Node >= 22.19; this is ${process.versions.node} and ${projectNode} is missing (run npm install)`,
  );
  process.exit(1);
}

// `corral proxmox serve …` is the Proxmox VE API on its own port (src/proxmox/cli.ts); `corral doctor` the checks.
const entries = {
  proxmox: join(root, 'src', 'proxmox', 'cli.ts'),
  doctor: join(root, 'src', 'server', 'tools', 'doctor-cli.ts'),
  schedule: join(root, 'src', 'server', 'tools', 'schedule-cli.ts'),
  web: join(root, 'server.ts'),
};
const entry = entries[command];
// --expose-gc: the disk-export relay asks for young-generation collections as it goes (src/server/http/stream-gc.ts).
const child = spawn(nodeBin, ['--expose-gc', '--import', 'tsx', entry, ...rest], {
  cwd: root,
  stdio: 'inherit',
  env: { NODE_ENV: 'production', ...process.env },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
