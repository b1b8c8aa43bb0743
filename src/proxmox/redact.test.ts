import { describe, expect, it } from 'vitest';
import { ProxmoxGapRegistry } from '@/server/domain/proxmox-gaps';
import { GapLog, gapShape, redactAddresses, redactError } from './redact';
import { ProxmoxError, paramError } from './wire';

describe('redaction', () => {
  it('hides apiserver URLs and addresses, leaves Proxmox vocabulary alone', () => {
    expect(redactAddresses('connect ECONNREFUSED 10.0.0.1:6443')).toBe('connect ECONNREFUSED the cluster');
    expect(redactAddresses('request to https://10.96.0.1:443/apis/kubevirt.io/v1/x failed')).toBe(
      'request to the cluster failed',
    );
    expect(redactAddresses('connect ECONNREFUSED [fd00::1]:6443')).toBe('connect ECONNREFUSED the cluster');
    expect(redactAddresses('connect ETIMEDOUT fd00:10:96::1:443')).toBe('connect ETIMEDOUT the cluster');
    expect(redactAddresses('getaddrinfo ENOTFOUND kubernetes.default.svc:443')).toBe(
      'getaddrinfo ENOTFOUND the cluster',
    );
    for (const kept of [
      "Configuration file 'nodes/corral-1/qemu-server/100.conf' does not exist",
      'current: local-lvm:vm-100-disk-1,format=raw,size=10G',
      'changing the MAC address is not supported (current BC:24:11:AA:BB:CC)',
      'UPID:corral-1:00000001:0000ABCD:6754A1B2:qmstart:100:root@pam:',
    ])
      expect(redactAddresses(kept)).toBe(kept);
  });

  it('redacts messages and per-parameter reasons, keeping the status', () => {
    const e = redactError(new ProxmoxError(503, 'connect ECONNREFUSED 10.0.0.1:6443'));
    expect([e.status, e.message]).toEqual([503, 'connect ECONNREFUSED the cluster']);
    expect(redactError(paramError({ disk: 'fetch http://10.0.0.1/x failed' })).errors).toEqual({
      disk: 'fetch the cluster failed',
    });
    expect(redactError(new Error('socket hang up at 172.16.0.4:6443')).message).toBe('socket hang up at the cluster');
  });
});

describe('gap log', () => {
  it('logs each method and path shape once, bounded', () => {
    const lines: string[] = [];
    const gaps = new GapLog((l) => lines.push(l), new ProxmoxGapRegistry(3));
    gaps.note('GET', ['nodes', 'corral-1', 'ceph', 'status']);
    gaps.note('GET', ['nodes', 'corral-2', 'ceph', 'status']);
    gaps.note('POST', ['nodes', 'corral-1', 'qemu', '100', 'migrate']);
    gaps.note('POST', ['nodes', 'corral-1', 'qemu', '101', 'migrate']);
    gaps.note('GET', ['x\n[proxmox-gap] forged']);
    gaps.note('GET', ['a']);
    gaps.note('GET', ['b']);
    expect(lines).toEqual([
      '[proxmox-gap] GET /nodes/corral-1/ceph/status',
      '[proxmox-gap] POST /nodes/corral-1/qemu/100/migrate',
      '[proxmox-gap] GET /{arg}',
      '[proxmox-gap] (more than 3 distinct gaps; no further ones are logged)',
    ]);
    expect(gapShape(['nodes', 'n1', 'storage', 'local', 'content', 'local:iso/x.iso'])).toBe(
      '/nodes/{node}/storage/{storage}/content/{volume}',
    );
  });
});
