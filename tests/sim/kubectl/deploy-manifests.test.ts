/**
 * deploy/ renders with kustomize (the base, both overlays, both examples) and every rendered object passes the
 * embedded cluster's server-side dry run through real kubectl — the same request path `kubectl apply -k` takes, with
 * the apiserver's validation of PodDisruptionBudget, NetworkPolicy and Ingress (src/sim/resources/builtin-validation.ts).
 * Skipped when kubectl is not installed (`.ci/run` installs it).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../src/sim/index.js';

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const root = fileURLToPath(new URL('../../../', import.meta.url));

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered manifests
type Json = Record<string, any>;

let cluster: EmbeddedCluster;
let dir: string;

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--cache-dir', join(dir, 'cache'), ...args], {
      cwd: root,
      env: { ...process.env, HOME: dir, KUBECONFIG: join(dir, 'kubeconfig') },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

async function render(path: string): Promise<{ yaml: string; objects: Json[] }> {
  const r = await kubectl(['kustomize', path]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return { yaml: r.stdout, objects: parseAllDocuments(r.stdout).map((d) => d.toJS() as Json) };
}

const find = (objects: Json[], kind: string) => objects.find((o) => o.kind === kind)!;

async function dryRun(yaml: string): Promise<string> {
  const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], yaml);
  if (r.code !== 0) throw new Error(`kubectl apply --dry-run=server: ${r.stderr}`);
  return r.stdout;
}

describe.skipIf(!hasKubectl)('deploy/ kustomize manifests', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'corral-deploy-'));
    cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', kubeconfigPath: join(dir, 'kubeconfig') });
    // A dry-run Namespace is not stored, so the namespaced objects need the real one (as on a second apply).
    await kubectl(['create', 'namespace', 'corral-system']);
  });
  afterAll(async () => {
    await cluster?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    'deploy',
    'deploy/overlays/single',
    'deploy/overlays/ha',
    'deploy/examples/ingress',
    'deploy/examples/tailscale',
  ])('%s renders and passes a server-side dry run', async (path) => {
    const { yaml, objects } = await render(path);
    const out = await dryRun(yaml);
    for (const o of objects) {
      const resource = `${o.kind.toLowerCase()}${o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : ''}`;
      expect(out).toMatch(
        new RegExp(`^${resource}/${o.metadata.name} (created|configured|unchanged) \\(server dry run\\)$`, 'm'),
      );
    }
    // Nothing was stored.
    expect((await kubectl(['get', 'deployment', 'corral', '-n', 'corral-system'])).stderr).toContain('NotFound');
  });

  it('the base runs one hardened replica with the benchmarks-sized requests and writable emptyDirs only', async () => {
    const { objects } = await render('deploy');
    const deployment = find(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const [container] = pod.containers;
    expect(container.image).toBe('ghcr.io/corral-dev/corral:0.1.0');
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.requests.memory).toBe('384Mi');
    expect(container.volumeMounts.map((m: Json) => m.mountPath).sort()).toEqual(['/app/.next/cache', '/tmp']);
    expect(pod.volumes.every((v: Json) => v.emptyDir)).toBe(true);
    expect(find(objects, 'NetworkPolicy').spec.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 8006 }]);
    expect(find(objects, 'PodDisruptionBudget')).toBeUndefined();
  });

  it('the ha overlay runs two replicas on different nodes with a PodDisruptionBudget of one', async () => {
    const { objects } = await render('deploy/overlays/ha');
    const deployment = find(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    const [term] =
      deployment.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(term).toEqual({
      topologyKey: 'kubernetes.io/hostname',
      labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'corral' } },
    });
    expect(find(objects, 'PodDisruptionBudget').spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'corral' } },
    });
    // Console sessions live in the replica that bridges them: clients stick to one replica.
    expect(find(objects, 'Service').spec).toMatchObject({ sessionAffinity: 'ClientIP' });
  });

  it('the dry run applies the apiserver validation of those kinds', async () => {
    const pdb = (spec: string) =>
      `apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad, namespace: corral-system}\nspec: ${spec}\n`;
    await expect(dryRun(pdb('{minAvailable: 1, maxUnavailable: 1}'))).rejects.toThrow(
      'minAvailable and maxUnavailable cannot be both set',
    );
    await expect(dryRun(pdb("{minAvailable: '150%'}"))).rejects.toThrow('must not be greater than 100%');
    const ingress = `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad, namespace: corral-system}
spec: {rules: [{http: {paths: [{path: /, backend: {service: {name: corral, port: {}}}}]}}]}\n`;
    await expect(dryRun(ingress)).rejects.toThrow(
      /spec\.rules\[0\]\.http\.paths\[0\]\.pathType: Required value.*spec\.rules\[0\]\.http\.paths\[0\]\.backend\.service\.port: Invalid value/s,
    );
    const netpol = `apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: bad, namespace: corral-system}
spec: {podSelector: {}, policyTypes: [Inbound], ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/33}}]}]}\n`;
    await expect(dryRun(netpol)).rejects.toThrow(
      /spec\.policyTypes\[0\]: Unsupported value: "Inbound".*spec\.ingress\[0\]\.from\[0\]\.ipBlock\.cidr: Invalid value/s,
    );
  });
});
