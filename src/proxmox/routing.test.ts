import { describe, expect, it } from 'vitest';
import { RouteTable, splitPath } from './routing';
import { ProxmoxError } from './wire';

describe('splitPath', () => {
  it('decodes each segment after splitting so %2F stays inside a volume id', () => {
    expect(splitPath('/nodes/pve/storage/local/content/local:iso%2Fx.iso')).toEqual([
      'nodes',
      'pve',
      'storage',
      'local',
      'content',
      'local:iso/x.iso',
    ]);
  });

  it('decodes %21 inside UPIDs and leaves raw ones alone', () => {
    const raw = 'UPID:pve:00000001:00000000:65000000:qmstart:100:root@pam!tok:';
    expect(splitPath(`/nodes/pve/tasks/${raw.replace('!', '%21')}/status`)[3]).toBe(raw);
    expect(splitPath(`/nodes/pve/tasks/${raw}/status`)[3]).toBe(raw);
  });

  it('refuses malformed escapes as a 400', () => {
    expect(() => splitPath('/nodes/%E0%A4%A')).toThrow(ProxmoxError);
  });
});

describe('RouteTable', () => {
  const table = new RouteTable<string>()
    .add('GET', '/nodes/{node}/qemu/{vmid}/status/current', 'current')
    .add('POST', '/nodes/{node}/qemu/{vmid}/status/{action}', 'action')
    .add('GET', '/nodes/{node}/tasks', 'tasks')
    .add('GET', '/nodes/{node}/{sub}', 'node-sub')
    .add('GET', '/version', 'version');

  it('matches literals and captures parameters', () => {
    expect(table.match('GET', ['nodes', 'pve', 'qemu', '100', 'status', 'current'])).toEqual({
      handler: 'current',
      params: { node: 'pve', vmid: '100' },
      pattern: '/nodes/{node}/qemu/{vmid}/status/current',
    });
    expect(table.match('POST', ['nodes', 'pve', 'qemu', '100', 'status', 'start'])?.params.action).toBe('start');
  });

  it('prefers literal segments over parameters', () => {
    expect(table.match('GET', ['nodes', 'pve', 'tasks'])?.handler).toBe('tasks');
    expect(table.match('GET', ['nodes', 'pve', 'dns'])?.handler).toBe('node-sub');
  });

  it('returns nothing for an unknown path or method', () => {
    expect(table.match('GET', ['nodes', 'pve', 'qemu', '100', 'nope'])).toBeUndefined();
    expect(table.match('DELETE', ['version'])).toBeUndefined();
  });

  it('refuses duplicate and conflicting registrations', () => {
    expect(() => new RouteTable<string>().add('GET', '/a', 'x').add('GET', '/a', 'y')).toThrow(/twice/);
    expect(() => new RouteTable<string>().add('GET', '/a/{x}', 'x').add('GET', '/a/{y}/b', 'y')).toThrow(/conflicts/);
  });
});
