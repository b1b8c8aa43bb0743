import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { contextNames, loadKubeConfig } from './kubeconfig';

const yaml = `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "http://127.0.0.1:6443"}
- name: prod
  cluster: {server: "https://prod.example:6443", insecure-skip-tls-verify: false}
users:
- name: u
  user: {token: t}
contexts:
- name: lab
  context: {cluster: lab, user: u}
- name: prod
  context: {cluster: prod, user: u}
current-context: lab
`;

describe('loadKubeConfig', () => {
  it('loads YAML, lists contexts, lets plain http through and leaves https verification alone', () => {
    const kc = loadKubeConfig({ yaml });
    expect(contextNames(kc)).toEqual(['lab', 'prod']);
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'lab', skipTLSVerify: true });
    const prod = loadKubeConfig({ yaml, context: 'prod' });
    expect(prod.getCurrentContext()).toBe('prod');
    expect(prod.getCurrentCluster()?.skipTLSVerify).toBe(false);
  });

  it('reads a file named by --kubeconfig or KUBECONFIG', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
    writeFileSync(file, yaml);
    expect(loadKubeConfig({ file }).getCurrentContext()).toBe('lab');
    expect(loadKubeConfig({}, { KUBECONFIG: file, NODE_ENV: 'test' }).getCurrentContext()).toBe('lab');
  });

  it('names the known contexts when --context is wrong, and a missing file', () => {
    expect(() => loadKubeConfig({ yaml, context: 'staging' })).toThrow(
      /context staging is not in the kubeconfig \(contexts: lab, prod\)/,
    );
    expect(() => loadKubeConfig({ file: '/nonexistent/kubeconfig' })).toThrow(CorralError);
  });
});
