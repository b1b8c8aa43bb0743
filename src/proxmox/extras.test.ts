import { describe, expect, it } from 'vitest';
import { emptyExtras, parseExtras, serializeExtras } from './extras';

describe('extras annotation', () => {
  it('round-trips', () => {
    const e = {
      options: { description: 'web server', onboot: '1' },
      disks: { scsi0: { storage: 'local-lvm', options: { iothread: '1' } }, ide2: { options: {}, empty: true } },
      nets: { net0: { bridge: 'vmbr0', options: { firewall: '1' } } },
    };
    expect(parseExtras(serializeExtras(e))).toEqual(e);
  });

  it('degrades garbage to empty extras', () => {
    expect(parseExtras(undefined)).toEqual(emptyExtras());
    expect(parseExtras('{not json')).toEqual(emptyExtras());
    expect(parseExtras('[1]')).toEqual(emptyExtras());
    expect(parseExtras('{"options":{"a":1,"b":"x"},"disks":{"scsi0":5}}')).toEqual({
      options: { b: 'x' },
      disks: {},
      nets: {},
    });
  });
});
