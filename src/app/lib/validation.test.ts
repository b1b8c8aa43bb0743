import { describe, expect, it } from 'vitest';
import {
  cpuProblem,
  diskProblem,
  fieldErrors,
  imageRefProblem,
  memoryProblem,
  nameProblem,
  sshKeyProblem,
  urlProblem,
} from './validation';

describe('nameProblem', () => {
  it('accepts DNS labels', () => {
    for (const ok of ['web', 'web-1', '0a', 'a'.repeat(63)]) expect(nameProblem(ok)).toBeNull();
  });
  it('explains each kind of bad name', () => {
    expect(nameProblem('')).toMatch(/required/);
    expect(nameProblem('a'.repeat(64))).toMatch(/63/);
    expect(nameProblem('Web')).toMatch(/Lower-case/);
    expect(nameProblem('-web')).toMatch(/start/);
    expect(nameProblem('web_1')).toMatch(/"_"/);
    expect(nameProblem('web.1')).toMatch(/"\."/);
    expect(nameProblem('web-')).toMatch(/end/);
  });
});

describe('sizes and cpu', () => {
  it('checks vCPU bounds', () => {
    expect(cpuProblem(2)).toBeNull();
    expect(cpuProblem(0)).toMatch(/At least/);
    expect(cpuProblem(65)).toMatch(/At most/);
    expect(cpuProblem(1.5)).toMatch(/whole/);
  });
  it('checks memory and disk sizes', () => {
    expect(memoryProblem('4Gi')).toBeNull();
    expect(memoryProblem('4G')).toBeNull();
    expect(memoryProblem('4 gigs')).toMatch(/size like/);
    expect(memoryProblem('1Mi')).toMatch(/at least/);
    expect(diskProblem('')).toMatch(/required/);
    expect(diskProblem('20Gi')).toBeNull();
    expect(diskProblem('100Mi')).toMatch(/at least 1Gi/);
  });
});

describe('source fields', () => {
  it('checks URLs, image references and SSH keys', () => {
    expect(urlProblem('https://example.com/a.qcow2')).toBeNull();
    expect(urlProblem('ftp://x/a')).toMatch(/http/);
    expect(urlProblem('nope')).toMatch(/valid/);
    expect(imageRefProblem('quay.io/containerdisks/fedora:42')).toBeNull();
    expect(imageRefProblem('docker://quay.io/x/y:1')).toBeNull();
    expect(imageRefProblem('quay.io/x y')).toMatch(/spaces/);
    expect(sshKeyProblem('')).toBeNull();
    expect(sshKeyProblem('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI me@host')).toBeNull();
    expect(sshKeyProblem('hello')).toMatch(/public key/);
  });
});

describe('fieldErrors', () => {
  it('maps "field: message" parts to their fields and keeps the rest general', () => {
    const r = fieldErrors('name: must be a DNS label; mem: malformed size; cluster exploded', ['name', 'mem', 'cpu']);
    expect(r.byField).toEqual({ name: 'must be a DNS label', mem: 'malformed size' });
    expect(r.general).toEqual(['cluster exploded']);
  });
  it('uses the first path segment of nested fields and ignores unknown ones', () => {
    const r = fieldErrors('source.image: unknown catalog image "x"; foo: bar', ['source']);
    expect(r.byField).toEqual({ source: 'unknown catalog image "x"' });
    expect(r.general).toEqual(['foo: bar']);
  });
});
