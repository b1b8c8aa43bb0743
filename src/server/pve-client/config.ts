/**
 * `corral web --pve NAME=URL` (repeatable): the Proxmox VE hosts a VM can be moved to. The secrets come from the
 * environment, never the command line (it shows in `ps`):
 * - `CORRAL_PVE_<NAME>_TOKEN` — the API token as PVE writes it, `user@realm!tokenid=secret`, or
 *   `CORRAL_PVE_<NAME>_TOKEN_FILE` — a file holding it (a mounted Secret);
 * - `CORRAL_PVE_<NAME>_CA` — a PEM file with the CA that signed the host's certificate (optional);
 * - `CORRAL_PVE_<NAME>_INSECURE=1` — skip the certificate check (a self-signed host; optional).
 * `<NAME>` is the name upper-cased with `-` as `_`. Everything is checked at start: a bad value stops the server
 * with a message naming the option or variable.
 */
import { readFileSync } from 'node:fs';
import type { PveHostConfig } from './client';

const NAME = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;
const TOKEN = /^[^\s@!=]+@[^\s@!=]+![A-Za-z][A-Za-z0-9_.-]*=\S+$/;

export const pveEnvPrefix = (name: string): string => `CORRAL_PVE_${name.toUpperCase().replace(/-/g, '_')}`;

function readSecretFile(path: string, variable: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new Error(`${variable}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}

/** The hosts `--pve` names, with their secrets from `env`; throws a message naming what is wrong. */
export function parsePveHosts(
  values: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): PveHostConfig[] {
  const out: PveHostConfig[] = [];
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq < 1) throw new Error(`--pve ${value}: expected NAME=URL, e.g. --pve pve1=https://pve1.lan:8006`);
    const name = value.slice(0, eq);
    const raw = value.slice(eq + 1);
    if (!NAME.test(name))
      throw new Error(`--pve ${value}: the name must be lower-case letters, digits and '-' (at most 32)`);
    if (out.some((h) => h.name === name)) throw new Error(`--pve ${name}: named twice`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`--pve ${name}: '${raw}' is not a URL (https://host:8006)`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error(`--pve ${name}: the URL must be http(s), not ${url.protocol}`);
    if (url.pathname.replace(/\/+$/, '') !== '' || url.search || url.username)
      throw new Error(`--pve ${name}: give the host's base URL only (https://host:8006), without path or credentials`);
    const prefix = pveEnvPrefix(name);
    const tokenFile = env[`${prefix}_TOKEN_FILE`];
    const token = (env[`${prefix}_TOKEN`] ?? (tokenFile ? readSecretFile(tokenFile, `${prefix}_TOKEN_FILE`) : ''))
      .trim()
      .replace(/^PVEAPIToken=/, '');
    if (!token) throw new Error(`--pve ${name}: set ${prefix}_TOKEN (or ${prefix}_TOKEN_FILE) to its API token`);
    if (!TOKEN.test(token))
      throw new Error(`${prefix}_TOKEN: expected PVE's form user@realm!tokenid=secret (e.g. root@pam!corral=…)`);
    const caFile = env[`${prefix}_CA`];
    const ca = caFile ? readSecretFile(caFile, `${prefix}_CA`) : undefined;
    if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----'))
      throw new Error(`${prefix}_CA: ${caFile} holds no PEM certificate`);
    const insecureText = (env[`${prefix}_INSECURE`] ?? '').trim().toLowerCase();
    if (insecureText && !['1', '0', 'true', 'false'].includes(insecureText))
      throw new Error(`${prefix}_INSECURE: expected 1 or 0, not '${insecureText}'`);
    const insecure = insecureText === '1' || insecureText === 'true';
    if (insecure && ca) throw new Error(`${prefix}_INSECURE and ${prefix}_CA exclude each other`);
    out.push({
      name,
      url: `${url.protocol}//${url.host}`,
      token,
      ...(ca ? { ca } : {}),
      ...(insecure ? { insecure } : {}),
    });
  }
  return out;
}
