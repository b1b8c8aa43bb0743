/**
 * `GET /api/v1/namespaces/{ns}/pods/{name}/exec` over WebSocket, as the apiserver proxies it to the kubelet:
 * channel.k8s.io framing (one channel byte per binary message: 0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize;
 * v5 adds 255 = close a stream), the exit status as a `Status` JSON on channel 3 (v4+), then a normal close.
 *
 * Files: the process sees the pod's own writable layer and the claims its container mounts (container-files.ts);
 * `chroot <dir> [command]` runs the command with `<dir>` as its root, as a privileged container can.
 *
 * The container runs the simulator's small shell with the pod name as hostname: `sh`/`bash` without `-c` is an
 * interactive shell (reading stdin), `sh -c '…'` runs a script, anything else is exec'd as one command.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { ApiError, badRequest, notFound } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { ContainerFiles } from './container-files.js';
import { podIdentity } from './guest-identity.js';
import { isKnownCommand } from './shell/commands.js';
import { TerminalSession } from './shell/terminal-session.js';
import { decodeSegment, isWebSocketUpgrade, refuseUpgrade, websocketAcceptor } from './upgrade.js';

const PODS = '/pods';
const NODES = '/nodes';
const EXEC_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/;

/** In the kubelet's preference order. */
export const EXEC_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
] as const;

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const CLOSE = 255;

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash']);

export interface ExecRequest {
  namespace: string;
  pod: KObject;
  container: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export function matchExecPath(pathname: string): { namespace: string; name: string } | undefined {
  const m = EXEC_PATH.exec(pathname);
  const namespace = m && decodeSegment(m[1]!);
  const name = m && decodeSegment(m[2]!);
  return namespace && name ? { namespace, name } : undefined;
}

const flag = (q: URLSearchParams, name: string) => ['true', '1'].includes((q.get(name) ?? '').toLowerCase());

function containerNames(pod: KObject): string[] {
  const spec = (pod.spec ?? {}) as { containers?: { name?: unknown }[] };
  return (spec.containers ?? []).map((c) => String(c.name ?? '')).filter(Boolean);
}

/** What the apiserver and kubelet check before upgrading; throws their error. */
export function validateExec(store: ObjectStore, namespace: string, name: string, query: URLSearchParams): ExecRequest {
  const pod = store.get(PODS, namespace, name);
  if (!pod) throw notFound('', 'pods', name);
  const command = query.getAll('command');
  if (command.length === 0 || command[0] === '') throw badRequest('you must specify at least 1 command');
  const request = {
    stdin: flag(query, 'stdin'),
    stdout: flag(query, 'stdout'),
    stderr: flag(query, 'stderr'),
    tty: flag(query, 'tty'),
  };
  if (!request.stdin && !request.stdout && !request.stderr) {
    throw badRequest('you must specify at least one of stdin, stdout, stderr');
  }
  const names = containerNames(pod);
  let container = query.get('container') ?? '';
  if (!container) {
    if (names.length !== 1) {
      throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
    }
    container = names[0]!;
  } else if (!names.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
  const status = (pod.status ?? {}) as { phase?: string };
  const phase = status.phase ?? 'Pending';
  if (phase === 'Succeeded' || phase === 'Failed') {
    throw badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`);
  }
  if (!(pod.spec as { nodeName?: string } | undefined)?.nodeName)
    throw badRequest(`pod ${name} does not have a host assigned`);
  if (phase !== 'Running') throw badRequest(`unable to upgrade connection: container not found ("${container}")`);
  return { namespace, pod, container, command, ...request };
}

export class PodExec {
  private readonly acceptor = websocketAcceptor(EXEC_PROTOCOLS);

  private readonly files: ContainerFiles;

  constructor(private readonly store: ObjectStore) {
    this.files = new ContainerFiles(store);
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    const target = matchExecPath(url.pathname);
    if (!target)
      return refuseUpgrade(socket, new ApiError(404, 'NotFound', 'the server could not find the requested resource'));
    let request: ExecRequest;
    try {
      if (!isWebSocketUpgrade(req)) throw badRequest('Upgrade request required');
      request = validateExec(this.store, target.namespace, target.name, url.searchParams);
    } catch (err) {
      return refuseUpgrade(socket, err);
    }
    void this.acceptor.accept(req, socket, head).then((ws) => this.run(ws, request));
  }

  private run(ws: WebSocket, request: ExecRequest): void {
    const protocol = ws.protocol || 'channel.k8s.io';
    const jsonStatus = protocol === 'v4.channel.k8s.io' || protocol === 'v5.channel.k8s.io';
    const send = (channel: number, data: string | Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      const payload = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      ws.send(Buffer.concat([Buffer.from([channel]), payload]), { binary: true });
    };
    let finished = false;
    const finish = (status: number, failure?: { message: string; reason: string; code?: number }) => {
      if (finished) return;
      finished = true;
      if (jsonStatus) {
        send(STATUS, JSON.stringify(statusObject(request.command, status, failure)));
      } else if (status !== 0 || failure) {
        send(STATUS, failure?.message ?? `command terminated with non-zero exit code: exit code ${status}`);
      }
      ws.close(1000);
    };
    const node = this.store.get(NODES, undefined, String((request.pod.spec as { nodeName?: string }).nodeName));
    const identity = podIdentity(request.pod, node);
    let files = this.files.view(request.pod, request.container, () => identity);
    let command = request.command;
    if (command[0]!.split('/').pop() === 'chroot') {
      const dir = command[1] ?? '';
      if (!dir.startsWith('/') || !files.isDir(dir)) {
        const why = `chroot: cannot change root directory to '${dir}': No such file or directory\n`;
        send(request.tty ? STDOUT : STDERR, request.tty ? why.replace(/\n/g, '\r\n') : why);
        return finish(125);
      }
      files = files.chroot(dir);
      command = command.length > 2 ? command.slice(2) : ['/bin/sh', '-i'];
    }
    const [program, ...args] = command;
    const base = program!.split('/').pop()!;
    const session = new TerminalSession({
      files,
      identity: () => identity,
      tty: request.tty,
      user: 'root',
      cwd: '/',
      shellName: base === 'bash' ? 'bash' : 'sh',
      write: (text, stream) => {
        // With a tty there is one output stream; stderr is the terminal too.
        if (stream === 'stderr' && !request.tty) {
          if (request.stderr) send(STDERR, text);
        } else if (request.stdout) send(STDOUT, text);
      },
      onExit: (status) => finish(status),
    });

    ws.on('message', (data, isBinary) => {
      const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (!isBinary || buf.length === 0 || finished) return;
      const channel = buf[0];
      if (channel === STDIN && request.stdin) session.input(buf.subarray(1));
      else if (channel === CLOSE && buf[1] === STDIN) session.endOfInput();
      // RESIZE (4) needs no answer: the simulated terminal has a fixed 80x24 geometry. Unknown channels are dropped.
    });
    ws.on('error', () => ws.terminate());

    if (SHELLS.has(base) && args[0] === '-c') {
      finish(session.runScript(args[1] ?? ''));
    } else if (SHELLS.has(base) && args.every((a) => a.startsWith('-'))) {
      session.startShell();
      if (!request.stdin) session.endOfInput(); // no stdin: the shell reads EOF at once
    } else if (!isKnownCommand(base)) {
      finish(126, {
        reason: 'InternalError',
        code: 500,
        message:
          `Internal error occurred: error executing command in container: failed to exec in container: failed to start exec: ` +
          `OCI runtime exec failed: exec failed: unable to start container process: exec: "${program}": executable file not found in $PATH: unknown`,
      });
    } else {
      finish(session.runScript(command.map(shellQuote).join(' ')));
    }
  }
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The Status the kubelet puts on the error channel when the process ends (remotecommand v4 protocol). */
function statusObject(
  command: string[],
  exitCode: number,
  failure?: { message: string; reason: string; code?: number },
) {
  if (failure)
    return {
      metadata: {},
      status: 'Failure',
      message: failure.message,
      reason: failure.reason,
      ...(failure.code ? { code: failure.code } : {}),
    };
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}
