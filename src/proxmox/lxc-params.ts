/**
 * Parameters of the `lxc` endpoints as PVE clients send them: which PVE container keys Corral has no counterpart for
 * (and the reason a client is told), and the one NIC a CT has.
 */
import type { Params } from './params';
import { parsePropertyString } from './translate/property-string';
import { paramError } from './wire';

export const NOT_IN_SCHEMA = 'property is not defined in schema and the schema does not allow additional properties';

/** PVE lxc keys Corral has no counterpart for, with the reason a client is told. */
export function unsupportedCtKey(key: string): string | undefined {
  if (/^mp\d+$/.test(key)) return 'a Corral container has one volume (rootfs, or mp0 at /data when unprivileged)';
  if (/^net[1-9]\d*$/.test(key)) return 'a Corral container has one NIC, the pod network (net0)';
  if (/^(dev|unused)\d+$/.test(key)) return 'Corral containers do not pass devices or keep unused volumes';
  if (key === 'password' || key === 'ssh-public-keys')
    return "Corral does not set credentials inside a container; use its terminal (Corral's CT console)";
  const reasons: Record<string, string> = {
    pool: 'Corral pools are not served through this API',
    onboot: "a Corral container runs until it is stopped; there is no separate 'start on boot'",
    startup: 'Corral containers have no start order',
    protection: 'Corral containers have no protection flag',
    features: 'a container pod has no LXC features (nesting, keyctl, fuse, mount)',
    nameserver: 'DNS comes from the cluster',
    searchdomain: 'DNS comes from the cluster',
    cpuunits: 'CPU is requests = limits = cores',
    hookscript: 'Corral runs no hook scripts',
    timezone: 'the image decides the time zone',
    console: 'the console is Corral’s CT terminal',
    tty: 'the console is Corral’s CT terminal',
    cmode: 'the console is Corral’s CT terminal',
    restore: 'Corral restores no container backups',
    unique: 'Corral restores no container backups',
    'ignore-unpack-errors': 'Corral unpacks no template archives; the template is a container image',
    bwlimit: 'Corral restores no container backups',
    template: 'Corral has no container templates',
    lock: 'locks are Corral’s own (running operations)',
    debug: 'Corral containers have no debug mode',
    entrypoint: 'a Corral container runs its own init',
    env: 'a Corral container keeps its image’s environment',
    arch: 'the node decides the architecture',
  };
  return Object.hasOwn(reasons, key) ? reasons[key] : undefined;
}

/** Values PVE clients send by default that change nothing here; anything else for these keys is refused. */
function harmless(key: string, value: string): boolean {
  if (key === 'onboot' || key === 'force' || key === 'protection' || key === 'template') return value === '0';
  return false;
}

/** The one NIC a CT has: the pod network. A net0 asking for anything else is refused rather than ignored. */
export function checkNet0(value: string): void {
  const { head, props } = parsePropertyString(value);
  if (head !== undefined) throw paramError({ net0: `invalid format - unexpected '${head}' (give key=value pairs)` });
  const allowed: Record<string, (v: string) => boolean> = {
    name: (v) => v === 'eth0',
    bridge: (v) => v === 'vmbr0',
    type: (v) => v === 'veth',
    ip: (v) => v === 'dhcp',
    ip6: (v) => ['dhcp', 'auto', 'manual'].includes(v),
    firewall: (v) => v === '0',
  };
  for (const [k, v] of props) {
    const ok = allowed[k];
    if (!ok)
      throw paramError({ net0: `'${k}' is not supported: the CT's NIC is the pod network (name=eth0,bridge=vmbr0)` });
    if (!ok(v))
      throw paramError({
        net0: `${k}=${v} is not supported: the CT's NIC is the pod network (name=eth0, bridge=vmbr0, ip=dhcp, no firewall)`,
      });
  }
}

export function refuseUnsupported(args: Params, allowed: readonly string[]): void {
  // Entries, not assignments: a key such as `__proto__` must become an error like any other.
  const errors: [string, string][] = [];
  for (const k of args.keys()) {
    if (allowed.includes(k)) continue;
    const reason = unsupportedCtKey(k);
    if (reason && harmless(k, args.raw(k) ?? '')) continue;
    errors.push([k, reason ? `not supported: ${reason}` : NOT_IN_SCHEMA]);
  }
  if (errors.length) throw paramError(Object.fromEntries(errors));
}
