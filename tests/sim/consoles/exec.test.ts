import { PassThrough } from 'node:stream';
import { Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCluster } from '../../../src/sim/index.js';
import { NS, plantPod, startConsolesCluster, StreamSocket, wsUrl } from './harness.js';

let cluster: EmbeddedCluster;
let exec: Exec;

beforeAll(async () => {
  cluster = await startConsolesCluster();
  plantPod(cluster, 'app-0');
  plantPod(cluster, 'pending-0', 'Pending');
  plantPod(cluster, 'done-0', 'Succeeded');
  plantPod(cluster, 'multi-0', 'Running', ['web', 'sidecar']);
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  exec = new Exec(kc);
});
afterAll(() => cluster.close());

interface ExecResult {
  stdout: string;
  stderr: string;
  status: V1Status;
}

/** Run through client-node's Exec (v5.channel.k8s.io) and collect both streams and the final status. */
function runExec(
  pod: string,
  command: string[],
  options: { stdin?: string; tty?: boolean; container?: string } = {},
): Promise<ExecResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const stdin = options.stdin === undefined ? null : new PassThrough();
  return new Promise((resolve, reject) => {
    exec
      .exec(NS, pod, options.container ?? 'main', command, stdout, stderr, stdin, options.tty ?? false, (status) => {
        setImmediate(() => resolve({ stdout: out, stderr: err, status }));
      })
      .then(() => {
        if (stdin) {
          stdin.write(options.stdin);
          stdin.end();
        }
      }, reject);
  });
}

describe('pod exec (channel.k8s.io)', () => {
  it('runs a one-shot command through client-node Exec and reports Success on the status channel', async () => {
    const result = await runExec('app-0', ['hostname']);
    expect(result).toEqual({ stdout: 'app-0\n', stderr: '', status: { metadata: {}, status: 'Success' } });
  });

  it('runs sh -c scripts and reports a non-zero exit code the way the kubelet does', async () => {
    const ok = await runExec('app-0', ['sh', '-c', 'whoami && pwd; ip -br a']);
    expect(ok.stdout).toMatch(/^root\n\/\nlo +UNKNOWN +127\.0\.0\.1\/8 ::1\/128 \neth0 +UP +10\.244\.2\.9\/24 \n$/);
    const failed = await runExec('app-0', ['sh', '-c', 'nosuch; exit 3']);
    expect(failed.stderr).toBe('sh: nosuch: command not found\n');
    expect(failed.status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });

  it('an interactive shell reads commands from stdin until it ends', async () => {
    const result = await runExec('app-0', ['/bin/sh'], { stdin: 'hostname\necho "$USER in $PWD"\nexit 5\n' });
    expect(result.stdout).toBe('app-0\nroot in /\n');
    expect(result.status.details?.causes?.[0]?.message).toBe('5');
  });

  it('with a tty it echoes, prompts and uses CR LF', async () => {
    const result = await runExec('app-0', ['bash'], { stdin: 'hostname\rexit\r', tty: true });
    expect(result.stdout).toBe('root@app-0:/# hostname\r\napp-0\r\nroot@app-0:/# exit\r\n');
    expect(result.status.status).toBe('Success');
  });

  it('a program that does not exist fails like the container runtime says', async () => {
    const result = await runExec('app-0', ['/usr/bin/frobnicate']);
    expect(result.status.status).toBe('Failure');
    expect(result.status.message).toContain('exec: "/usr/bin/frobnicate": executable file not found in $PATH');
  });

  it('refuses before upgrading when the pod cannot be exec-ed into', async () => {
    const path = (pod: string, query = 'command=hostname&stdout=true&container=main') =>
      `/api/v1/namespaces/${NS}/pods/${pod}/exec?${query}`;
    const open = (p: string) => StreamSocket.open(wsUrl(cluster, p), ['v5.channel.k8s.io']).catch((e: unknown) => e);
    expect(await open(path('nope'))).toMatchObject({
      status: 404,
      body: { reason: 'NotFound', message: 'pods "nope" not found' },
    });
    expect(await open(path('pending-0'))).toMatchObject({
      status: 400,
      body: { message: 'pod pending-0 does not have a host assigned' },
    });
    expect(await open(path('done-0'))).toMatchObject({
      status: 400,
      body: { message: 'cannot exec into a container in a completed pod; current phase is Succeeded' },
    });
    expect(await open(path('multi-0', 'command=hostname&stdout=true'))).toMatchObject({
      status: 400,
      body: { message: 'a container name must be specified for pod multi-0, choose one of: [web sidecar]' },
    });
    expect(await open(path('app-0', 'command=hostname&stdout=true&container=other'))).toMatchObject({
      status: 400,
      body: { message: 'container other is not valid for pod app-0' },
    });
    expect(await open(path('app-0', 'stdout=true'))).toMatchObject({
      status: 400,
      body: { message: 'you must specify at least 1 command' },
    });
  });

  it('negotiates the best offered protocol and frames v4 output with channel bytes', async () => {
    const socket = await StreamSocket.open(
      wsUrl(cluster, `/api/v1/namespaces/${NS}/pods/app-0/exec?command=uname&command=-n&stdout=true&stderr=true`),
      ['v4.channel.k8s.io', 'channel.k8s.io'],
    );
    expect(socket.ws.protocol).toBe('v4.channel.k8s.io');
    const frame = await socket.read(1 + 'app-0\n'.length);
    expect(frame[0]).toBe(1);
    expect(frame.subarray(1).toString()).toBe('app-0\n');
    const status = await socket.readUntil('"Success"}');
    expect(status.charCodeAt(0)).toBe(3);
    expect(JSON.parse(status.slice(1))).toEqual({ metadata: {}, status: 'Success' });
    expect((await socket.waitClosed()).code).toBe(1000);
  });

  it('v5: a resize message is accepted and closing stdin ([255, 0]) ends an interactive shell', async () => {
    const socket = await StreamSocket.open(
      wsUrl(cluster, `/api/v1/namespaces/${NS}/pods/app-0/exec?command=sh&stdin=true&stdout=true&stderr=true`),
      ['v5.channel.k8s.io'],
    );
    expect(socket.ws.protocol).toBe('v5.channel.k8s.io');
    socket.send(Buffer.concat([Buffer.from([4]), Buffer.from('{"Width":100,"Height":30}')]));
    socket.send(Buffer.concat([Buffer.from([4]), Buffer.from('not json')]));
    socket.send(Buffer.concat([Buffer.from([0]), Buffer.from('hostname\nfalse\n')]));
    socket.send(Buffer.from([255, 0]));
    const out = await socket.readUntil('}]}}');
    expect(out).toContain('\x01app-0\n');
    expect(out).toContain('"reason":"NonZeroExitCode"');
    expect((await socket.waitClosed()).code).toBe(1000);
  });
});
