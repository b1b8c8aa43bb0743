// Client-side checks for the create wizard, so mistakes show while typing. The server validates again
// (its zod schemas are the authority); these rules mirror them so the two rarely disagree.
import { parseQuantity } from './quantity';

export const NAME_MAX = 63;
export const CPU_MAX = 64;
const MIN_MEMORY = 128 * 1024 ** 2;
const MIN_DISK = 1024 ** 3;

/** Why `name` is not a valid VM name, or null when it is. */
export function nameProblem(name: string): string | null {
  if (name === '') return 'Name is required';
  if (name.length > NAME_MAX) return `At most ${NAME_MAX} characters (this is ${name.length})`;
  if (/[A-Z]/.test(name)) return 'Lower-case letters only';
  if (!/^[a-z0-9]/.test(name)) return 'Must start with a letter or digit';
  const bad = /[^a-z0-9-]/.exec(name);
  if (bad) return `"${bad[0]}" is not allowed: use a-z, 0-9 and -`;
  if (name.endsWith('-')) return 'Must not end with -';
  return null;
}

export function cpuProblem(cpu: number): string | null {
  if (!Number.isInteger(cpu)) return 'vCPUs must be a whole number';
  if (cpu < 1) return 'At least 1 vCPU';
  if (cpu > CPU_MAX) return `At most ${CPU_MAX} vCPUs`;
  return null;
}

function sizeProblem(text: string, what: string, min: number, minText: string): string | null {
  if (text.trim() === '') return `${what} is required`;
  const bytes = parseQuantity(text);
  if (bytes === null) return `${what}: use a size like 4Gi or 4G`;
  if (bytes < min) return `${what}: at least ${minText}`;
  return null;
}

export const memoryProblem = (text: string) => sizeProblem(text, 'Memory', MIN_MEMORY, '128Mi');
export const diskProblem = (text: string) => sizeProblem(text, 'Disk', MIN_DISK, '1Gi');

/** A URL the server could fetch (import / ISO). */
export function urlProblem(text: string): string | null {
  if (text.trim() === '') return 'URL is required';
  try {
    const u = new URL(text.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'Use an http:// or https:// URL';
    return null;
  } catch {
    return 'Not a valid URL';
  }
}

/** An OCI image reference such as quay.io/containerdisks/fedora:42. */
export function imageRefProblem(text: string): string | null {
  const t = text.trim();
  if (t === '') return 'Image reference is required';
  if (/\s/.test(t)) return 'No spaces in an image reference';
  if (!/^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?(:[\w.-]+)?(@sha256:[a-f0-9]{64})?$/i.test(t.replace(/^docker:\/\//, '')))
    return 'Use registry/repository[:tag], e.g. quay.io/containerdisks/fedora:42';
  return null;
}

export function sshKeyProblem(text: string): string | null {
  const t = text.trim();
  if (t === '') return null;
  if (!/^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-[\w@.-]+) [A-Za-z0-9+/=]+( .*)?$/.test(t))
    return 'Paste one public key line (ssh-ed25519 AAAA… user@host)';
  return null;
}

/**
 * Splits a server error message into per-field messages. The server names the field first
 * (`name: must be a DNS label; mem: malformed size`); anything without a known field stays general.
 */
export function fieldErrors(
  message: string,
  fields: readonly string[],
): { byField: Record<string, string>; general: string[] } {
  const byField: Record<string, string> = {};
  const general: string[] = [];
  for (const part of message.split(/;\s*/).filter((p) => p.trim() !== '')) {
    const m = /^\s*([A-Za-z][\w.]*)\s*:\s*(.+)$/.exec(part);
    const field = m?.[1]?.split('.')[0];
    if (m?.[2] && field && fields.includes(field))
      byField[field] = byField[field] ? `${byField[field]}; ${m[2]}` : m[2];
    else general.push(part.trim());
  }
  return { byField, general };
}
