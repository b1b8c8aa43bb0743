/**
 * Throttling and logging of failed `POST /access/ticket` attempts, so a password cannot be guessed at wire speed
 * and an operator learns that somebody is trying. Wrong API token secrets are logged the same way (one line per
 * burst) but not throttled: behind a reverse proxy every caller shares one address, and blocking it would lock
 * every Terraform/Ansible token out because of one guesser (token secrets are UUIDs; guessing them is hopeless).
 *
 *   - Failures are counted per source address and per user id over a sliding minute. Once either has `limit`
 *     failures (5) in the last minute, logins for it answer `429` without the password being checked, until the
 *     oldest failure leaves the window. A correct password does not lift the block early (that would let a guesser
 *     keep going), and a success does not reset the count.
 *   - One log line per burst: `[proxmox] login failure for USER from ADDR (n in the last minute)` for the first
 *     failure of an address, then at most once a minute per address while failures go on; across all addresses at
 *     most `maxLinesPerMinute` lines a minute (the rest are counted and mentioned in the next line), so neither
 *     failures nor many source addresses can flood the log.
 *   - Memory is bounded: at most `maxKeys` addresses and users are tracked (the least recently seen are dropped).
 */
import { ProxmoxError } from '../wire';

export interface LoginLimiterOptions {
  /** Failures per minute after which an address or user is refused (default 5). */
  limit?: number;
  windowMs?: number;
  maxKeys?: number;
  maxLinesPerMinute?: number;
  now?: () => number;
  log: (line: string) => void;
}

/** User ids and addresses come from the client: printable ASCII only, bounded, so a log line stays one line. */
function printable(text: string): string {
  const flat = text.replace(/[^\x21-\x7e]/g, '?');
  return flat.length > 64 ? `${flat.slice(0, 64)}…` : flat;
}

export class LoginLimiter {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly maxLines: number;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  /** `a:<addr>` / `u:<user>` → failure times (ms), oldest first; Map order = least recently seen first. */
  private readonly failures = new Map<string, number[]>();
  /** Address → when its last line was logged. */
  private readonly loggedAt = new Map<string, number>();
  private lineWindowStart = 0;
  private linesInWindow = 0;
  private suppressed = 0;

  constructor(options: LoginLimiterOptions) {
    this.limit = options.limit ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxKeys = options.maxKeys ?? 10_000;
    this.maxLines = options.maxLinesPerMinute ?? 20;
    this.now = options.now ?? Date.now;
    this.log = options.log;
  }

  /**
   * Throws `429` when the address or the user has used up its failures for the last minute. A refused attempt
   * counts against its address (so a guesser that keeps going stays blocked), not against the user (so a guesser
   * cannot keep somebody else locked out for longer than a minute after stopping). `perUser: false` (API tokens)
   * checks the address only, so nobody can lock a token user's automation out by failing under its name.
   */
  check(userid: string, address: string, perUser = true): void {
    const now = this.now();
    const wait = Math.max(this.blockedFor(`a:${address}`, now), perUser ? this.blockedFor(`u:${userid}`, now) : 0);
    if (wait <= 0) return;
    this.note(userid, address, this.record(`a:${address}`, now), now);
    throw new ProxmoxError(
      429,
      `authentication failure - too many failed logins, try again in ${Math.ceil(wait / 1000)} s`,
    );
  }

  /** Records a failed login and logs it (once per burst and address). */
  failure(userid: string, address: string): void {
    const now = this.now();
    const n = this.record(`a:${address}`, now);
    this.record(`u:${userid}`, now);
    this.note(userid, address, n, now);
  }

  /** Logs a wrong API token secret (once per burst and address); counted apart from logins, never blocking. */
  tokenFailure(tokenId: string, address: string): void {
    const now = this.now();
    this.note(tokenId, address, this.record(`t:${address}`, now), now, 'API token');
  }

  private note(userid: string, address: string, n: number, now: number, what = 'login'): void {
    const last = this.loggedAt.get(`${what} ${address}`);
    if (last !== undefined && now - last < this.windowMs) return;
    if (now - this.lineWindowStart >= this.windowMs) {
      this.lineWindowStart = now;
      this.linesInWindow = 0;
    }
    if (this.linesInWindow >= this.maxLines) {
      this.suppressed++;
      return;
    }
    this.linesInWindow++;
    this.loggedAt.delete(`${what} ${address}`);
    this.loggedAt.set(`${what} ${address}`, now);
    if (this.loggedAt.size > this.maxKeys) this.loggedAt.delete(this.loggedAt.keys().next().value as string);
    const more = this.suppressed ? `; ${this.suppressed} more from other addresses not logged` : '';
    this.suppressed = 0;
    this.log(
      `[proxmox] ${what} failure for ${printable(userid)} from ${printable(address)} (${n} in the last minute${more})`,
    );
  }

  /** Milliseconds until the key may try again (0: not blocked). */
  private blockedFor(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times.length < this.limit) return 0;
    return (times[times.length - this.limit] as number) + this.windowMs - now;
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    while (times.length && (times[0] as number) <= now - this.windowMs) times.shift();
    if (!times.length) this.failures.delete(key);
    return times;
  }

  private record(key: string, now: number): number {
    const times = this.recent(key, now);
    times.push(now);
    // Keep only what the limit needs, so a flood cannot grow one entry without bound.
    if (times.length > this.limit * 4) times.splice(0, times.length - this.limit * 4);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value as string);
    return times.length;
  }
}
