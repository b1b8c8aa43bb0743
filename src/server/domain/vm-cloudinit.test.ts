import { describe, expect, it } from 'vitest';
import { hashPassword, isCryptHash, sha512Crypt } from '../../lib/sha-crypt';
import {
  CloudInitFieldError,
  applyChange,
  decodeSshKeys,
  emptySettings,
  encodeSshKeys,
  netmask,
  renderImage,
  renderNetworkConfigDrive,
  renderUserData,
  resolvedType,
  validateSettings,
  type CloudInitSettings,
} from './vm-cloudinit';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBd7m1s0yq3Qw0cXkqf5JtY0m2QmYq1m0Xz8Y2y3fW4u me@host';
const settings = (over: Partial<CloudInitSettings>): CloudInitSettings => ({ ...emptySettings(), ...over });

describe('SHA-512 crypt', () => {
  it('matches glibc for the published test vector, and a fresh hash has a 16-character salt', () => {
    expect(sha512Crypt('Hello world!', 'saltstring')).toBe(
      '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1',
    );
    const h = hashPassword('pw');
    expect(h).toMatch(/^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
    expect(sha512Crypt('pw', h.split('$')[2]!)).toBe(h);
    expect(isCryptHash(h)).toBe(true);
    expect(isCryptHash('plain-text')).toBe(false);
  });
});

describe('rendering as PVE does', () => {
  it('root gets disable_root and no default user; ciupgrade=0 drops package_upgrade; a dotted name is the fqdn', () => {
    const text = renderUserData({
      settings: settings({ user: 'root', upgrade: false }),
      hostname: 'web.example.org',
      macs: [],
      snippets: {},
    });
    expect(text).toBe(
      '#cloud-config\nhostname: web\nmanage_etc_hosts: true\nfqdn: web.example.org\nuser: root\ndisable_root: False\nchpasswd:\n  expire: False\n',
    );
  });

  it('config drive network data is OpenStack JSON with routes and DNS services', () => {
    const json = JSON.parse(
      renderNetworkConfigDrive({
        settings: settings({
          ipConfigs: { '0': { ip: '10.0.0.5/24', gw: '10.0.0.1', ip6: 'auto' } },
          nameservers: ['10.0.0.1'],
        }),
        hostname: 'win',
        macs: ['bc:24:11:00:00:01'],
        snippets: {},
      }),
    ) as Record<string, unknown>;
    expect(json).toEqual({
      links: [{ id: 'eth0', type: 'phy', ethernet_mac_address: 'bc:24:11:00:00:01' }],
      networks: [
        {
          id: 'network0',
          link: 'eth0',
          type: 'ipv4',
          ip_address: '10.0.0.5',
          netmask: '255.255.255.0',
          routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: '10.0.0.1' }],
        },
        { id: 'network1', link: 'eth0', type: 'ipv6_slaac' },
      ],
      services: [{ type: 'dns', address: '10.0.0.1' }],
    });
  });

  it('the instance id follows the content, so a changed image re-runs cloud-init', () => {
    const a = renderImage({ settings: settings({ user: 'a' }), hostname: 'x', macs: [], snippets: {} }, 'nocloud');
    const b = renderImage({ settings: settings({ user: 'b' }), hostname: 'x', macs: [], snippets: {} }, 'nocloud');
    expect(a.metaData).not.toBe(b.metaData);
    expect(a.metaData).toMatch(/^instance-id: [0-9a-f]{40}\nlocal-hostname: x\n$/);
  });

  it('Windows guests default to configdrive2; netmasks from prefixes', () => {
    expect(resolvedType(emptySettings(), 'win11')).toBe('configdrive2');
    expect(resolvedType(emptySettings(), 'l26')).toBe('nocloud');
    expect(resolvedType(settings({ type: 'nocloud' }), 'win11')).toBe('nocloud');
    expect([netmask(0), netmask(8), netmask(22), netmask(32)]).toEqual([
      '0.0.0.0',
      '255.0.0.0',
      '255.255.252.0',
      '255.255.255.255',
    ]);
  });
});

describe('validation names the field', () => {
  const field = (s: CloudInitSettings) => {
    try {
      validateSettings(s);
      return undefined;
    } catch (err) {
      return err instanceof CloudInitFieldError ? err.field : String(err);
    }
  };
  it('refuses bad addresses, gateways without an address, bad keys, users and snippets', () => {
    expect(field(settings({ ipConfigs: { '1': { ip: '10.0.0.1' } } }))).toBe('ipconfig1');
    expect(field(settings({ ipConfigs: { '0': { ip6: 'auto', gw6: 'fe80::1' } } }))).toBe('ipconfig0');
    expect(field(settings({ ipConfigs: { '0': { ip6: '2001:db8::5/64', gw6: '2001:db8::1' } } }))).toBeUndefined();
    expect(field(settings({ nameservers: ['1.1.1.256'] }))).toBe('nameserver');
    expect(field(settings({ searchDomains: ['-bad.example'] }))).toBe('searchdomain');
    expect(field(settings({ sshKeys: ['hello world'] }))).toBe('sshkeys');
    expect(field(settings({ user: 'Bad' }))).toBe('ciuser');
    expect(field(settings({ custom: { user: 'local:iso/x.iso' } }))).toBe('cicustom');
    expect(field(settings({ custom: { vendor: 'local:snippets/v.yaml' } }))).toBe('cicustom');
    expect(field(settings({ user: 'ok', sshKeys: [KEY], nameservers: ['::1'] }))).toBeUndefined();
  });

  it('sshkeys round-trip through PVE’s URL encoding; a change with null removes', () => {
    const encoded = encodeSshKeys([KEY, KEY.replace('me@host', 'you@host')]);
    expect(encoded).not.toMatch(/[ +@\n]/);
    expect(decodeSshKeys(encoded)).toEqual([KEY, KEY.replace('me@host', 'you@host')]);
    const base = settings({ user: 'a', ipConfigs: { '0': { ip: 'dhcp' }, '1': { ip: 'dhcp' } } });
    expect(applyChange(base, { user: null, ipConfigs: { '1': null } })).toEqual(
      settings({ ipConfigs: { '0': { ip: 'dhcp' } } }),
    );
    expect(applyChange(base, { ipConfigs: { '2': { ip: 'dhcp' } }, replaceIpConfigs: true }).ipConfigs).toEqual({
      '2': { ip: 'dhcp' },
    });
  });
});
