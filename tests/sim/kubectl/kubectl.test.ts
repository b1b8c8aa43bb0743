/**
 * Real kubectl against the embedded cluster: the imperative commands a new user types first. kubectl sends
 * built-in kinds as protobuf (create namespace/configmap/secret/deployment/job) or JSON (run, expose), scales
 * through deployments/scale and edits with a strategic merge patch; every result is read back with `-o json`, and
 * `describe` reads the objects in protobuf.
 * Skipped when kubectl is not installed (`.ci/run` installs it).
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { garbageCollectorModule } from '../../../src/sim/gc/index.js';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../src/sim/index.js';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects read back from kubectl -o json
type Json = Record<string, any>;

let cluster: EmbeddedCluster;
let dir: string;

function kubectl(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'kubectl',
      ['--cache-dir', join(dir, 'cache'), ...args],
      { encoding: 'utf8', env: { ...process.env, HOME: dir, KUBECONFIG: join(dir, 'kubeconfig'), ...env } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}

const getJson = async (...args: string[]): Promise<Json> =>
  JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as Json;

/** A KUBE_EDITOR: a script that runs `sed -i <expr>` on the file kubectl hands it. */
function editor(name: string, sedExpr: string): string {
  const path = join(dir, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\nexec sed -i '${sedExpr}' "$1"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(!hasKubectl)('kubectl against the embedded cluster', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'corral-kubectl-'));
    cluster = await startEmbeddedCluster({
      port: 0,
      fleet: 'empty',
      speed: 50,
      modules: [garbageCollectorModule()],
      kubeconfigPath: join(dir, 'kubeconfig'),
    });
  });
  afterAll(async () => {
    await cluster?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create namespace', async () => {
    expect(await kubectl(['create', 'namespace', 'kt'])).toContain('namespace/kt created');
    const ns = await getJson('namespace', 'kt');
    expect(ns).toMatchObject({ kind: 'Namespace', metadata: { name: 'kt' }, status: { phase: 'Active' } });
  });

  it('create configmap', async () => {
    await kubectl(['create', 'configmap', 'cfg', '-n', 'kt', '--from-literal=a=b', '--from-literal=empty=']);
    const cm = await getJson('configmap', 'cfg', '-n', 'kt');
    expect(cm.data).toEqual({ a: 'b', empty: '' });
  });

  it('create secret generic', async () => {
    await kubectl(['create', 'secret', 'generic', 'sec', '-n', 'kt', '--from-literal=pw=hunter2']);
    const secret = await getJson('secret', 'sec', '-n', 'kt');
    expect(secret.data).toEqual({ pw: Buffer.from('hunter2').toString('base64') });
  });

  it('create deployment', async () => {
    await kubectl(['create', 'deployment', 'web', '-n', 'kt', '--image=nginx', '--replicas=2', '--port=8080']);
    const deployment = await getJson('deployment', 'web', '-n', 'kt');
    expect(deployment.spec).toMatchObject({
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } } },
    });
    expect(deployment.spec.template.spec.containers).toEqual([
      { name: 'nginx', image: 'nginx', ports: [{ containerPort: 8080 }], resources: {} },
    ]);
  });

  it('create job', async () => {
    await kubectl(['create', 'job', 'once', '-n', 'kt', '--image=busybox', '--', 'echo', 'hi']);
    const job = await getJson('job', 'once', '-n', 'kt');
    expect(job.spec.template.spec).toMatchObject({
      restartPolicy: 'Never',
      containers: [{ name: 'once', image: 'busybox', command: ['echo', 'hi'] }],
    });
  });

  it('run', async () => {
    await kubectl(['run', 'box', '-n', 'kt', '--image=busybox', '--restart=Never', '--labels=app=box', '--env=A=1']);
    const pod = await getJson('pod', 'box', '-n', 'kt');
    expect(pod.metadata.labels).toEqual({ app: 'box' });
    expect(pod.spec).toMatchObject({
      restartPolicy: 'Never',
      containers: [{ name: 'box', image: 'busybox', env: [{ name: 'A', value: '1' }] }],
    });
  });

  it('expose', async () => {
    await kubectl(['expose', 'deployment', 'web', '-n', 'kt', '--port=80', '--target-port=8080']);
    const service = await getJson('service', 'web', '-n', 'kt');
    expect(service.spec).toMatchObject({
      selector: { app: 'web' },
      ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
    });
  });

  it('scale deployment', async () => {
    expect(await kubectl(['scale', 'deployment', 'web', '-n', 'kt', '--replicas=5'])).toContain('scaled');
    expect((await getJson('deployment', 'web', '-n', 'kt')).spec.replicas).toBe(5);
    // With a precondition kubectl reads the Scale and PUTs it back.
    await kubectl(['scale', 'deployment', 'web', '-n', 'kt', '--current-replicas=5', '--replicas=0']);
    expect((await getJson('deployment', 'web', '-n', 'kt')).spec.replicas).toBe(0);
  });

  it('edit through KUBE_EDITOR', async () => {
    await kubectl(['edit', 'configmap', 'cfg', '-n', 'kt'], { KUBE_EDITOR: editor('cm', 's/^  a: b$/  a: edited/') });
    expect((await getJson('configmap', 'cfg', '-n', 'kt')).data).toEqual({ a: 'edited', empty: '' });
    await kubectl(['edit', 'deployment', 'web', '-n', 'kt'], {
      KUBE_EDITOR: editor('deploy', 's/image: nginx$/image: nginx:1.27/'),
    });
    const deployment = await getJson('deployment', 'web', '-n', 'kt');
    expect(deployment.spec.template.spec.containers[0].image).toBe('nginx:1.27');
    expect(deployment.metadata.generation).toBe(4); // create, two scales, the edit
  });

  it('describe reads protobuf responses (it asks for protobuf first)', async () => {
    const pod = await kubectl(['describe', 'pod', 'box', '-n', 'kt']);
    expect(pod).toMatch(/Name:\s+box/);
    expect(pod).toMatch(/Image:\s+busybox/);
    expect(pod).toMatch(/A:\s+1/);
    const deployment = await kubectl(['describe', 'deployment', 'web', '-n', 'kt']);
    expect(deployment).toMatch(/Image:\s+nginx:1\.27/);
    expect(deployment).toMatch(/Selector:\s+app=web/);
  });
});
