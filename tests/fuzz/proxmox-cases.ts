/**
 * Request generator for `/api2/json`, from the endpoints and parameters in docs/proxmox.md (the routes the
 * handler registers): wrong types, boundary numbers, invalid names and sizes, unknown keys, bad auth, hostile
 * path segments, malformed bodies. Mutations only reach the existing VM when they are invalid by construction
 * or sent without the privilege to act; valid power/delete verbs go to vmids that do not exist.
 */
import type { FuzzCase } from './http';
import { sample, type Rng } from './prng';
import { NASTY_STRINGS } from './values';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Kind = 'int' | 'bool' | 'string' | 'name' | 'size' | 'snapname' | 'disk' | 'net' | 'vmid' | 'enum' | 'ipconfig';

interface PxParam {
  name: string;
  kind: Kind;
  min?: number;
  max?: number;
  values?: string[];
  /** A valid value, used as the base of the request. */
  valid?: string;
}

interface PxRoute {
  method: Method;
  pattern: string;
  params: PxParam[];
  /** Invalid parameters may be aimed at the existing VM (the endpoint validates before acting). */
  safeOnExisting?: boolean;
  public?: boolean;
}

const INT = (name: string, min?: number, max?: number, valid = '1'): PxParam => ({
  name,
  kind: 'int',
  ...(min !== undefined ? { min } : {}),
  ...(max !== undefined ? { max } : {}),
  valid,
});
const BOOL = (name: string): PxParam => ({ name, kind: 'bool', valid: '0' });
const STR = (name: string, valid = 'fz'): PxParam => ({ name, kind: 'string', valid });

const VM_CONFIG: PxParam[] = [
  { name: 'name', kind: 'name', valid: '' },
  INT('cores', 1, 512, '1'),
  INT('sockets', 1, undefined, '1'),
  INT('memory', 64, 4194304, '512'),
  STR('tags', 'fz'),
  STR('description', 'fuzz'),
  BOOL('onboot'),
  { name: 'scsi1', kind: 'disk', valid: 'local-lvm:1' },
  { name: 'net1', kind: 'net', valid: 'virtio,bridge=vmbr0' },
  { name: 'ipconfig0', kind: 'ipconfig', valid: 'ip=dhcp' },
];

const CT_CONFIG: PxParam[] = [
  { name: 'hostname', kind: 'name', valid: '' },
  INT('cores', 1, 512, '1'),
  INT('memory', 64, 4194304, '512'),
  STR('tags', 'fz'),
  STR('description', 'fuzz'),
  { name: 'net0', kind: 'net', valid: 'name=eth0,bridge=vmbr0' },
];
const CT_TEMPLATE = 'local:vztmpl/alpine-3.20-default_20240908_amd64.tar.xz';

const RRD_PARAMS: PxParam[] = [
  { name: 'timeframe', kind: 'enum', values: ['hour', 'day', 'week', 'month', 'year'], valid: 'hour' },
  { name: 'cf', kind: 'enum', values: ['AVERAGE', 'MAX'], valid: 'AVERAGE' },
];

export const PROXMOX_ROUTES: PxRoute[] = [
  { method: 'GET', pattern: '/version', params: [] },
  { method: 'GET', pattern: '/cluster', params: [] },
  { method: 'GET', pattern: '/cluster/status', params: [] },
  { method: 'GET', pattern: '/cluster/nextid', params: [INT('vmid', 100, 999999999, '100')] },
  {
    method: 'GET',
    pattern: '/cluster/resources',
    params: [{ name: 'type', kind: 'enum', values: ['vm', 'node', 'storage'] }],
  },
  { method: 'GET', pattern: '/cluster/tasks', params: [] },
  { method: 'GET', pattern: '/cluster/ha/groups', params: [] },
  { method: 'GET', pattern: '/cluster/ha/resources', params: [] },
  { method: 'GET', pattern: '/cluster/options', params: [] },
  { method: 'GET', pattern: '/pools', params: [{ name: 'type', kind: 'enum', values: ['qemu', 'lxc', 'storage'] }] },
  { method: 'GET', pattern: '/pools/{poolid}', params: [] },
  { method: 'POST', pattern: '/pools', params: [STR('poolid', 'fz'), STR('comment', 'fuzz')] },
  {
    method: 'PUT',
    pattern: '/pools',
    params: [STR('poolid', 'fz'), { name: 'vms', kind: 'vmid', valid: '' }, BOOL('delete'), STR('comment', 'fuzz')],
  },
  { method: 'DELETE', pattern: '/pools', params: [STR('poolid', 'fz')] },
  { method: 'GET', pattern: '/nodes', params: [] },
  { method: 'GET', pattern: '/nodes/{node}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/status', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/version', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/time', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/dns', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/network', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/lxc', params: [] },
  {
    method: 'POST',
    pattern: '/nodes/{node}/lxc',
    params: [
      { name: 'vmid', kind: 'vmid', valid: '' },
      ...CT_CONFIG,
      STR('ostemplate', CT_TEMPLATE),
      { name: 'rootfs', kind: 'disk', valid: 'local-lvm:1' },
      BOOL('unprivileged'),
      BOOL('start'),
    ],
    safeOnExisting: true,
  },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}', params: [] },
  { method: 'DELETE', pattern: '/nodes/{node}/lxc/{vmid}', params: [BOOL('purge'), BOOL('force')] },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}/status', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}/status/current', params: [] },
  { method: 'POST', pattern: '/nodes/{node}/lxc/{vmid}/status/{action}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}/config', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}/snapshot', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/lxc/{vmid}/interfaces', params: [] },
  { method: 'PUT', pattern: '/nodes/{node}/lxc/{vmid}/config', params: CT_CONFIG, safeOnExisting: true },
  { method: 'POST', pattern: '/nodes/{node}/lxc/{vmid}/config', params: CT_CONFIG, safeOnExisting: true },
  { method: 'GET', pattern: '/storage', params: [] },
  { method: 'GET', pattern: '/storage/{storage}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/storage', params: [STR('content', 'images')] },
  { method: 'GET', pattern: '/nodes/{node}/storage/{storage}/status', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/storage/{storage}/content', params: [STR('content', 'iso')] },
  { method: 'GET', pattern: '/nodes/{node}/storage/{storage}/content/{volume}', params: [] },
  {
    method: 'GET',
    pattern: '/nodes/{node}/tasks',
    params: [INT('limit', 0, undefined, '10'), INT('start', 0, undefined, '0'), INT('vmid', 100), BOOL('errors')],
  },
  { method: 'GET', pattern: '/nodes/{node}/tasks/{upid}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/tasks/{upid}/status', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/tasks/{upid}/log', params: [INT('limit', 0), INT('start', 0)] },
  { method: 'GET', pattern: '/access', params: [] },
  { method: 'GET', pattern: '/access/ticket', params: [], public: true },
  {
    method: 'POST',
    pattern: '/access/ticket',
    params: [STR('username', 'root@pam'), STR('password', 'wrong-password'), STR('realm', 'pam')],
    public: true,
    safeOnExisting: true,
  },
  { method: 'GET', pattern: '/access/users', params: [] },
  { method: 'GET', pattern: '/access/groups', params: [] },
  { method: 'GET', pattern: '/access/roles', params: [] },
  { method: 'GET', pattern: '/access/domains', params: [] },
  { method: 'GET', pattern: '/access/permissions', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu', params: [] },
  {
    method: 'POST',
    pattern: '/nodes/{node}/qemu',
    params: [
      { name: 'vmid', kind: 'vmid', valid: '' },
      ...VM_CONFIG.map((p) =>
        p.name === 'scsi1' ? { ...p, name: 'scsi0' } : p.name === 'net1' ? { ...p, name: 'net0' } : p,
      ),
      BOOL('template'),
      BOOL('start'),
      { name: 'ide2', kind: 'disk', valid: 'none,media=cdrom' },
    ],
    safeOnExisting: true,
  },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}', params: [] },
  {
    method: 'DELETE',
    pattern: '/nodes/{node}/qemu/{vmid}',
    params: [BOOL('purge'), BOOL('destroy-unreferenced-disks')],
  },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/status', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/status/current', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/rrddata', params: RRD_PARAMS },
  { method: 'GET', pattern: '/nodes/{node}/rrddata', params: RRD_PARAMS },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/status/{action}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/config', params: [BOOL('current')] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/pending', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/cloudinit', params: [] },
  {
    method: 'GET',
    pattern: '/nodes/{node}/qemu/{vmid}/cloudinit/dump',
    params: [{ name: 'type', kind: 'enum', values: ['user', 'network', 'meta'], valid: 'user' }],
  },
  { method: 'PUT', pattern: '/nodes/{node}/qemu/{vmid}/config', params: VM_CONFIG, safeOnExisting: true },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/config', params: VM_CONFIG, safeOnExisting: true },
  {
    method: 'PUT',
    pattern: '/nodes/{node}/qemu/{vmid}/resize',
    params: [STR('disk', 'scsi0'), { name: 'size', kind: 'size', valid: '+1G' }],
    safeOnExisting: true,
  },
  { method: 'PUT', pattern: '/nodes/{node}/qemu/{vmid}/unlink', params: [STR('idlist', 'scsi9'), BOOL('force')] },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/template', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/agent', params: [] },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/agent/ping', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/agent/get-host-name', params: [] },
  {
    method: 'POST',
    pattern: '/nodes/{node}/qemu/{vmid}/clone',
    params: [{ name: 'newid', kind: 'vmid', valid: '' }, { name: 'name', kind: 'name', valid: '' }, STR('description')],
    safeOnExisting: true,
  },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/vncproxy', params: [BOOL('websocket')] },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/termproxy', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/snapshot', params: [] },
  {
    method: 'POST',
    pattern: '/nodes/{node}/qemu/{vmid}/snapshot',
    params: [{ name: 'snapname', kind: 'snapname', valid: 'fz' }, STR('description'), BOOL('vmstate')],
    safeOnExisting: true,
  },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/snapshot/{snap}', params: [] },
  { method: 'GET', pattern: '/nodes/{node}/qemu/{vmid}/snapshot/{snap}/config', params: [] },
  { method: 'DELETE', pattern: '/nodes/{node}/qemu/{vmid}/snapshot/{snap}', params: [BOOL('force')] },
  { method: 'POST', pattern: '/nodes/{node}/qemu/{vmid}/snapshot/{snap}/rollback', params: [BOOL('start')] },
];

interface Probe {
  value: string;
  label: string;
  strict?: boolean;
}

/** Values a parameter of this kind must refuse. */
function invalid(p: PxParam): Probe[] {
  const out: Probe[] = [];
  const add = (value: string, label = JSON.stringify(value.slice(0, 40)), strict = false) =>
    out.push({ value, label, ...(strict ? { strict } : {}) });
  switch (p.kind) {
    case 'int':
    case 'vmid': {
      for (const v of [
        'abc',
        '1.5',
        'NaN',
        'Infinity',
        '0x10',
        '1e3',
        'true',
        ' ',
        '１',
        '99999999999999999999',
        '9007199254740993',
      ])
        add(v);
      if (p.kind === 'vmid') for (const v of ['-1', '0', '99', '1000000000']) add(v);
      if (p.min !== undefined) {
        add(String(p.min - 1), undefined, p.name === 'memory');
        add('-9007199254740993');
      }
      if (p.max !== undefined) add(String(p.max + 1), undefined, p.name === 'cores' || p.name === 'memory');
      break;
    }
    case 'bool':
      for (const v of ['maybe', '2', '-1', 'tru', 'null', 'FALSE!', '1.0']) add(v);
      break;
    case 'name':
      for (const v of [
        'UPPER_case',
        'trailing-',
        '-lead',
        'a'.repeat(64),
        'a..b',
        '../x',
        'ñandú',
        'a b',
        'x\u0000y',
        'x\ny',
      ])
        add(v);
      break;
    case 'snapname':
      for (const v of ['1abc', '../x', 'a b', 'a'.repeat(100), 'ñ', 'x\u0000', '-x', 'a/b']) add(v);
      break;
    case 'size':
      for (const v of ['abc', '-5G', '+-1G', '0x10G', '5X', '1.5.5G', '99999999999999999999T', 'NaN', '+']) add(v);
      break;
    case 'disk':
      for (const v of ['garbage', ':::', 'local-lvm:abc', 'local-lvm:-1', 'nosuchstorage:10', 'local-lvm:1,size=abc'])
        add(v);
      add('local-lvm:0', 'disk of 0 GiB (< 1Gi)', true);
      add('local-lvm:65537', 'disk of 64 TiB + 1 GiB (> 64Ti)', true);
      add('nosuchstorage:cloudinit', 'cloud-init drive on a storage that does not exist');
      break;
    case 'net':
      for (const v of ['garbage', 'virtio=ZZ:ZZ', 'virtio,bridge=fz-no-such-network', 'model=virtio,macaddr=not-a-mac'])
        add(v);
      break;
    case 'ipconfig':
      for (const v of [
        'ip=300.1.1.1/24',
        'ip=10.0.0.1',
        'ip=dhcp,gw=10.0.0.1',
        'gw=10.0.0.1',
        'ip6=zz::1/64',
        'x=1',
        'dhcp',
      ])
        add(v);
      break;
    case 'enum':
      for (const v of ['bogus', 'VM', 'vm ', '../vm', 'vm\u0000']) add(v);
      break;
    case 'string':
      break;
  }
  return out;
}

const SEGMENT_PROBES: readonly string[] = [
  '..',
  '%2e%2e',
  '.',
  '%2F',
  'a%2Fb',
  '%00',
  '%',
  '%zz',
  encodeURIComponent('ñandú'),
  encodeURIComponent('😀'),
  'UPPER',
  '-1',
  '0',
  '9007199254740993',
  'a'.repeat(5000),
  encodeURIComponent('<script>'),
  encodeURIComponent("'; DROP TABLE x"),
];

export interface ProxmoxGenOptions {
  prefix: string;
  node: string;
  existingVmid: number;
  adminToken: string;
  viewerToken: string;
  count: number;
}

type Draft = Omit<FuzzCase, 'id' | 'suite'>;

export function generateProxmoxCases(rng: Rng, o: ProxmoxGenOptions): Draft[] {
  const drafts: Draft[] = [];
  let ghost = 900_000;
  let fresh = 7_000;
  let uniq = 0;
  const admin = { authorization: `PVEAPIToken=${o.adminToken}` };
  const viewer = { authorization: `PVEAPIToken=${o.viewerToken}` };
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const isVmRoute = (r: PxRoute) => r.pattern.includes('{vmid}');

  const path = (r: PxRoute, target: 'existing' | 'ghost', over: Record<string, string> = {}) =>
    o.prefix +
    r.pattern.replace(/\{(\w+)\}/g, (_, k: string) => {
      if (over[k] !== undefined) return over[k];
      if (k === 'node') return o.node;
      if (k === 'vmid') return String(target === 'existing' ? o.existingVmid : ghost++);
      if (k === 'action') return 'start';
      if (k === 'storage') return 'local-lvm';
      if (k === 'volume') return encodeURIComponent('local-lvm:vm-1-disk-0');
      if (k === 'snap') return `fz${uniq++}`;
      if (k === 'upid') return encodeURIComponent(`UPID:${o.node}:0000FFFF:00000000:00000000:qmstart:999999:root@pam:`);
      return 'x';
    });
  const baseParams = (r: PxRoute): Record<string, string> => {
    const out: Record<string, string> = {};
    if (r.pattern === '/nodes/{node}/qemu' && r.method === 'POST') {
      const id = fresh++;
      out.vmid = String(id);
      out.name = `fz-px-${id}`;
      out.cores = '1';
      out.memory = '512';
    }
    if (r.pattern === '/nodes/{node}/lxc' && r.method === 'POST') {
      const id = fresh++;
      Object.assign(out, {
        vmid: String(id),
        hostname: `fz-ct-${id}`,
        ostemplate: CT_TEMPLATE,
        cores: '1',
        memory: '512',
      });
    }
    if (r.pattern.endsWith('/clone')) {
      const id = fresh++;
      out.newid = String(id);
      out.name = `fz-clone-${id}`;
    }
    if (r.pattern.endsWith('/resize')) Object.assign(out, { disk: 'scsi0', size: '+1G' });
    if (r.pattern.endsWith('/snapshot') && r.method === 'POST') out.snapname = `fz${uniq++}`;
    if (r.pattern.endsWith('/unlink')) out.idlist = 'scsi9';
    if (r.pattern === '/access/ticket' && r.method === 'POST')
      Object.assign(out, { username: 'root@pam', password: 'wrong' });
    return out;
  };
  const request = (
    r: PxRoute,
    target: 'existing' | 'ghost',
    params: Record<string, string>,
    label: string,
    extra: Partial<Draft> & { pathOver?: Record<string, string> } = {},
  ): Draft => {
    const { pathOver, ...rest } = extra;
    const qs = new URLSearchParams(params).toString();
    const withQuery = r.method === 'GET' || r.method === 'DELETE';
    let p = path(r, target, pathOver);
    if (withQuery && qs) p += `?${qs}`;
    return {
      method: r.method,
      path: p,
      headers: { ...(r.public ? {} : admin), ...(withQuery ? {} : form) },
      ...(withQuery ? {} : { body: qs }),
      route: `${r.method} ${r.pattern}`,
      label,
      mustRefuse: r.method !== 'GET',
      ...rest,
    };
  };

  // 1. Every parameter of every route: each invalid value alone.
  for (const r of PROXMOX_ROUTES) {
    for (const p of r.params) {
      for (const probe of invalid(p)) {
        const target = isVmRoute(r) && r.safeOnExisting ? 'existing' : 'ghost';
        drafts.push(
          request(r, target, { ...baseParams(r), [p.name]: probe.value }, `${p.name} = ${probe.label}`, {
            mustRefuse: r.method !== 'GET',
            ...(probe.strict ? { strictRule: true } : {}),
          }),
        );
      }
      // Hostile strings in free-text parameters must not break anything (GET: any answer but 5xx).
      if (p.kind === 'string' && r.method === 'GET')
        for (const s of sample(rng, NASTY_STRINGS, 8))
          drafts.push(
            request(r, 'ghost', { [p.name]: s }, `${p.name} = ${JSON.stringify(s.slice(0, 30))}`, {
              mustRefuse: false,
            }),
          );
    }
    // Unknown keys.
    if (r.method !== 'GET' && r.params.length && !r.public) {
      for (const key of ['fuzzextra', 'Cores', 'constructor', '__proto__', 'scsi99999', 'net-1']) {
        const target = isVmRoute(r) && r.safeOnExisting ? 'existing' : 'ghost';
        drafts.push(request(r, target, { ...baseParams(r), [key]: '1' }, `unknown parameter ${key}`));
      }
    }
  }

  // Logins with hostile user names and passwords: always a refusal (401, or 429 once throttled), never a ticket.
  const ticket = PROXMOX_ROUTES.find((x) => x.method === 'POST' && x.pattern === '/access/ticket') as PxRoute;
  for (const s of NASTY_STRINGS) {
    if (!rng.chance(0.3)) continue;
    drafts.push(
      request(ticket, 'ghost', { username: s, password: 'wrong' }, `login as ${JSON.stringify(s.slice(0, 30))}`),
    );
    drafts.push(
      request(ticket, 'ghost', { username: 'root@pam', password: s }, `password ${JSON.stringify(s.slice(0, 30))}`),
    );
  }
  drafts.push(request(ticket, 'ghost', { username: 'a'.repeat(100_000), password: 'x' }, 'user name of 100k'));

  const createRoutes = PROXMOX_ROUTES.filter(
    (x) => x.method === 'POST' && (x.pattern === '/nodes/{node}/qemu' || x.pattern === '/nodes/{node}/lxc'),
  );
  // 2. Path segments: hostile values for every placeholder; valid verbs on vmids that do not exist.
  for (const r of PROXMOX_ROUTES) {
    for (const [, key] of r.pattern.matchAll(/\{(\w+)\}/g)) {
      for (const seg of sample(rng, SEGMENT_PROBES, 6)) {
        // A create must stay invalid whatever the node segment does: `cores=abc` keeps it refused.
        const params = createRoutes.includes(r) ? { ...baseParams(r), cores: 'abc' } : baseParams(r);
        drafts.push(
          request(r, 'ghost', params, `path {${key}} = ${JSON.stringify(seg.slice(0, 30))}`, {
            pathOver: { [key as string]: seg },
          }),
        );
      }
    }
    if (isVmRoute(r))
      drafts.push(
        request(r, 'ghost', baseParams(r), 'valid request for a vmid that does not exist', { mustRefuse: true }),
      );
  }
  for (const action of ['start', 'stop', 'shutdown', 'reboot', 'reset', 'suspend', 'resume']) {
    for (const r of PROXMOX_ROUTES.filter((x) => x.pattern.endsWith('/status/{action}')))
      drafts.push(request(r, 'ghost', {}, `${action} a vmid that does not exist`, { pathOver: { action } }));
  }
  for (const action of ['bogus', 'START', 'start%20', '..', '%2e%2e', 'start%00', 'destroy', encodeURIComponent('ñ')]) {
    const r = PROXMOX_ROUTES.find((x) => x.pattern === '/nodes/{node}/qemu/{vmid}/status/{action}') as PxRoute;
    drafts.push(request(r, 'existing', {}, `unknown power action ${JSON.stringify(action)}`, { pathOver: { action } }));
  }

  // 3. Authentication and privilege: nothing without credentials, nothing mutating for a Viewer.
  const authVariants: [string, Record<string, string>][] = [
    ['no credentials', {}],
    ['wrong token secret', { authorization: 'PVEAPIToken=root@pam!ci=00000000-0000-0000-0000-000000000000' }],
    ['token without secret', { authorization: 'PVEAPIToken=root@pam!ci' }],
    ['empty token', { authorization: 'PVEAPIToken=' }],
    ['bearer scheme', { authorization: 'Bearer abc' }],
    ['huge token', { authorization: `PVEAPIToken=root@pam!ci=${'a'.repeat(6000)}` }],
    ['latin-1 token user', { authorization: 'PVEAPIToken=r\u00f6ot@pam!ci=x' }],
    ['forged ticket cookie', { cookie: 'PVEAuthCookie=PVE:root@pam:6B0D54E1::Zm9yZ2Vk' }],
    ['malformed cookie', { cookie: 'PVEAuthCookie=%zz%' }],
  ];
  for (const r of PROXMOX_ROUTES) {
    if (r.public) continue;
    for (const [label, headers] of [authVariants[0], ...sample(rng, authVariants.slice(1), 3)] as [
      string,
      Record<string, string>,
    ][]) {
      const target = isVmRoute(r) ? 'existing' : 'ghost';
      const d = request(r, target, baseParams(r), label, { mustRefuse: true });
      delete d.headers.authorization;
      Object.assign(d.headers, headers);
      drafts.push(d);
    }
    if (r.method !== 'GET') {
      const target = isVmRoute(r) ? 'existing' : 'ghost';
      drafts.push(request(r, target, baseParams(r), 'Viewer token on a write', { headers: { ...viewer, ...form } }));
      drafts.push(
        request(
          r,
          r.safeOnExisting ? target : 'ghost',
          baseParams(r),
          'Viewer token + Tailscale-User-Login: root (identity headers never raise a role)',
          {
            headers: { ...viewer, ...form, 'tailscale-user-login': 'root' },
            strictRule: true,
          },
        ),
      );
    }
  }
  const start = PROXMOX_ROUTES.find((x) => x.pattern === '/nodes/{node}/qemu/{vmid}/status/{action}') as PxRoute;
  for (const action of ['start', 'stop', 'reset']) {
    drafts.push(
      request(start, 'existing', {}, `Viewer ${action}s the existing VM`, {
        pathOver: { action },
        headers: { ...viewer, ...form },
      }),
    );
    const d = request(start, 'existing', {}, `unauthenticated ${action} of the existing VM`, { pathOver: { action } });
    delete d.headers.authorization;
    drafts.push(d);
  }

  // 4. Bodies: JSON, nested, malformed, wrong content type, oversized, repeated keys.
  const putConfig = PROXMOX_ROUTES.find(
    (x) => x.method === 'PUT' && x.pattern === '/nodes/{node}/qemu/{vmid}/config',
  ) as PxRoute;
  const create = PROXMOX_ROUTES.find((x) => x.method === 'POST' && x.pattern === '/nodes/{node}/qemu') as PxRoute;
  for (const r of [putConfig, create]) {
    const target = r === putConfig ? 'existing' : 'ghost';
    const json = { ...admin, 'content-type': 'application/json' };
    const bodies: [string, string, Record<string, string>][] = [
      ['JSON with an invalid number', JSON.stringify({ ...baseParams(r), cores: 'abc' }), json],
      ['JSON with a nested object', JSON.stringify({ ...baseParams(r), cores: { a: 1 } }), json],
      ['JSON with an array of objects', JSON.stringify({ ...baseParams(r), memory: [{ a: 1 }] }), json],
      ['JSON array body', '[1,2,3]', json],
      ['JSON string body', '"cores=2"', json],
      ['malformed JSON', '{"cores":', json],
      ['JSON 5000 deep', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, json],
      [
        'text/plain form with a bad value',
        new URLSearchParams({ ...baseParams(r), cores: 'abc' }).toString(),
        { ...admin, 'content-type': 'text/plain' },
      ],
      ['no content type, bad value', new URLSearchParams({ ...baseParams(r), cores: 'abc' }).toString(), { ...admin }],
      [
        'multipart body',
        '--fz\r\nContent-Disposition: form-data; name="cores"\r\n\r\nabc\r\n--fz--\r\n',
        { ...admin, 'content-type': 'multipart/form-data; boundary=fz' },
      ],
      [
        'repeated key, invalid last',
        `${new URLSearchParams(baseParams(r)).toString()}&cores=2&cores=abc`,
        { ...admin, ...form },
      ],
      ['NUL in a value', `${new URLSearchParams(baseParams(r)).toString()}&cores=2%00`, { ...admin, ...form }],
      ['malformed percent escape', `${new URLSearchParams(baseParams(r)).toString()}&cores=%zz`, { ...admin, ...form }],
      ['body over 1 MiB', `description=${'a'.repeat(1_200_000)}&cores=abc`, { ...admin, ...form }],
    ];
    for (const [label, body, headers] of bodies) {
      const d = request(r, target, {}, label);
      d.headers = headers;
      d.body = body;
      if (body.length > 1_000_000) d.freshConnection = true;
      drafts.push(d);
    }
  }

  // 5. Paths no route has (PVE answers 501 and Corral logs a gap line).
  for (const p of [
    '/nodes/n/qemu/100/bogus',
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '//nodes',
    '/nodes/%00',
    `/${'a'.repeat(6000)}`,
    '',
  ])
    for (const m of ['GET', 'POST'] as const)
      drafts.push({
        method: m,
        path: `${o.prefix}${p}`,
        headers: { ...admin, ...(m === 'POST' ? form : {}) },
        ...(m === 'POST' ? { body: 'a=1' } : {}),
        route: `${m} (no route)`,
        label: `unrouted path ${p.slice(0, 50)}`,
        mustRefuse: m === 'POST',
      });

  // 6. Random combinations up to the requested count.
  const withParams = PROXMOX_ROUTES.filter((r) => r.params.some((p) => invalid(p).length));
  while (drafts.length < o.count) {
    const r = rng.pick(withParams);
    const params = baseParams(r);
    const labels: string[] = [];
    let strict = false;
    const candidates = r.params.filter((p) => invalid(p).length);
    for (let i = rng.int(1, 2); i > 0; i--) {
      const p = rng.pick(candidates);
      const probe = rng.pick(invalid(p));
      params[p.name] = probe.value;
      labels.push(`${p.name} = ${probe.label}`);
      if (probe.strict) strict = true;
    }
    const target = isVmRoute(r) && r.safeOnExisting ? 'existing' : 'ghost';
    const d = request(r, target, params, `combo: ${labels.join('; ')}`, {
      mustRefuse: r.method !== 'GET',
      ...(strict ? { strictRule: true } : {}),
    });
    if (rng.chance(0.2) && !r.public) {
      d.headers = { ...d.headers, ...viewer };
      d.label += ' (Viewer)';
    }
    drafts.push(d);
  }
  return drafts;
}
