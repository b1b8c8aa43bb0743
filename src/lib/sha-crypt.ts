/**
 * SHA-512 crypt (`$6$salt$hash`, the glibc/Ulrich Drepper scheme) — what PVE stores for `cipassword` and what
 * cloud-init's `password:` accepts, so the guest never receives a plain-text password and nothing Corral writes
 * holds one. Node's crypto has SHA-512 but not crypt(3); this is the published algorithm. The embedded cluster's guests
 * check typed passwords with the same code (src/sim/kubevirt/cloud-init.ts), so it lives outside both.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ROUNDS = 5000;

function sha512(...parts: Buffer[]): Buffer {
  const h = createHash('sha512');
  for (const p of parts) h.update(p);
  return h.digest();
}

function repeatTo(source: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = source[i % source.length]!;
  return out;
}

/** The 86 characters after `$6$salt$`, from the 64-byte final digest in the scheme's byte order. */
function encode(f: Buffer): string {
  let out = '';
  const b64 = (b2: number, b1: number, b0: number, n: number) => {
    let w = (b2 << 16) | (b1 << 8) | b0;
    for (let i = 0; i < n; i++) {
      out += ALPHABET[w & 0x3f];
      w >>>= 6;
    }
  };
  for (let i = 0; i < 21; i++) {
    const [x, y, z] = [f[i]!, f[i + 21]!, f[i + 42]!];
    if (i % 3 === 0) b64(x, y, z, 4);
    else if (i % 3 === 1) b64(y, z, x, 4);
    else b64(z, x, y, 4);
  }
  b64(0, 0, f[63]!, 2);
  return out;
}

/** The 86-character digest part of a `$6$` hash of `password` with `salt` (up to 16 characters) and `rounds`. */
export function sha512CryptDigest(password: string, salt: string, rounds = ROUNDS): string {
  const p = Buffer.from(password, 'utf8');
  const s = Buffer.from(salt.slice(0, 16), 'utf8');
  const b = sha512(p, s, p);
  const aParts = [p, s, repeatTo(b, p.length)];
  for (let n = p.length; n > 0; n >>= 1) aParts.push(n & 1 ? b : p);
  let a = sha512(...aParts);
  const dp = repeatTo(sha512(...Array.from({ length: p.length }, () => p)), p.length);
  const ds = repeatTo(sha512(...Array.from({ length: 16 + a[0]! }, () => s)), s.length);
  for (let i = 0; i < rounds; i++) {
    const parts: Buffer[] = [i & 1 ? dp : a];
    if (i % 3) parts.push(ds);
    if (i % 7) parts.push(dp);
    parts.push(i & 1 ? a : dp);
    a = sha512(...parts);
  }
  return encode(a);
}

/** `$6$<salt>$<digest>` with the default 5000 rounds. */
export function sha512Crypt(password: string, salt: string): string {
  return `$6$${salt.slice(0, 16)}$${sha512CryptDigest(password, salt)}`;
}

/** A fresh `$6$` hash with a random 16-character salt. */
export function hashPassword(password: string): string {
  const bytes = randomBytes(16);
  const salt = [...bytes].map((x) => ALPHABET[x & 0x3f]).join('');
  return sha512Crypt(password, salt);
}

/** PVE's test for "already a crypt hash" (`$1$`, `$5$`, `$6$`, `$2a$`, `$2y$` with salt and hash): stored as sent. */
export function isCryptHash(value: string): boolean {
  return /^\$(?:[156]|2[ay])(\$.+){2}/.test(value);
}
