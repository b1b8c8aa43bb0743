/**
 * Network device property strings (`net0`…). Requests come as `virtio=MAC,bridge=vmbr0`, bpg's
 * `model=virtio,bridge=vmbr0,firewall=0[,macaddr=…]`, or a bare `virtio,bridge=vmbr0`. Answers are always
 * `model=MAC,bridge=…,<other keys sorted>` — Ansible's proxmox_kvm extracts the MAC with `=(.*?),`, so the
 * MAC must be present and followed by a comma.
 */
import { createHash } from 'node:crypto';
import { parsePropertyString } from './property-string';

export const NET_MODELS = ['virtio', 'e1000', 'e1000e', 'rtl8139', 'vmxnet3', 'pcnet', 'ne2k_pci'] as const;
export type NetModel = (typeof NET_MODELS)[number];

export interface NetSpec {
  model: NetModel;
  /** Upper-case colon form, when the client chose one. */
  mac?: string;
  bridge?: string;
  /** The rest (`firewall`, `tag`, `mtu`, `queues`, `rate`, `link_down`, …) as sent. */
  options: Record<string, string>;
}

export class NetSpecError extends Error {}

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

export function parseNetKey(key: string): number | undefined {
  const m = /^net(\d{1,2})$/.exec(key);
  if (!m || String(Number(m[1])) !== m[1] || Number(m[1]) > 31) return undefined;
  return Number(m[1]);
}

function normaliseMac(mac: string): string {
  if (!MAC.test(mac)) throw new NetSpecError(`invalid MAC address '${mac}'`);
  const upper = mac.toUpperCase();
  // The least significant bit of the first octet marks multicast; a NIC must be unicast.
  if (parseInt(upper.slice(0, 2), 16) & 1) throw new NetSpecError(`MAC address '${mac}' is multicast`);
  return upper;
}

function isModel(text: string): text is NetModel {
  return (NET_MODELS as readonly string[]).includes(text);
}

export function parseNetSpec(text: string): NetSpec {
  const ps = parsePropertyString(text);
  let model: string | undefined;
  let mac: string | undefined;
  const options: Record<string, string> = {};
  let bridge: string | undefined;
  if (ps.head !== undefined) model = ps.head;
  for (const [k, v] of ps.props) {
    if (k === 'model') model = v;
    else if (k === 'macaddr') mac = v;
    else if (k === 'bridge') bridge = v;
    else if (isModel(k)) {
      model = k;
      mac = v;
    } else options[k] = v;
  }
  if (!model) throw new NetSpecError('missing network model (expected e.g. virtio,bridge=vmbr0)');
  if (!isModel(model))
    throw new NetSpecError(`unsupported network model '${model}' (supported: ${NET_MODELS.join(', ')})`);
  if (bridge !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._\-/]{0,62}$/.test(bridge))
    throw new NetSpecError(`invalid bridge '${bridge}'`);
  const spec: NetSpec = { model, options };
  if (mac !== undefined && mac !== '') spec.mac = normaliseMac(mac);
  if (bridge !== undefined) spec.bridge = bridge;
  return spec;
}

/** The config line: `virtio=BC:24:11:0A:1B:2C,bridge=vmbr0,firewall=1`. */
export function formatNet(spec: NetSpec & { mac: string }): string {
  const rest = Object.keys(spec.options)
    .sort()
    .map((k) => `${k}=${spec.options[k]}`);
  return [`${spec.model}=${spec.mac}`, ...(spec.bridge ? [`bridge=${spec.bridge}`] : []), ...rest].join(',');
}

/**
 * A MAC that depends only on the VM and the slot, so a config read, a restart and a re-created config all see
 * the same address. Proxmox's own OUI prefix (BC:24:11) keeps it recognisable and unicast/universal-bit clean.
 */
export function stableMac(namespace: string, name: string, slot: number): string {
  const digest = createHash('sha256').update(`${namespace}/${name}/net${slot}`).digest();
  const tail = [...digest.subarray(0, 3)].map((b) => b.toString(16).padStart(2, '0').toUpperCase());
  return ['BC', '24', '11', ...tail].join(':');
}
