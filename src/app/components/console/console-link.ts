// What the browser side of a console needs to know about the bridge: its URL and what a close code means.
// Pure functions (no DOM) so they are unit-tested; the codes are the server's (src/server/consoles/close-codes.ts).

export type ConsoleKind = 'vnc' | 'serial';

export function consoleUrl(
  location: { protocol: string; host: string },
  kind: ConsoleKind,
  namespace: string,
  name: string,
  mode: { takeover?: boolean; watch?: boolean; context?: string } = {},
): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const path = `/api/${kind === 'vnc' ? 'vnc' : 'tty'}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  const query = new URLSearchParams();
  if (mode.takeover) query.set('takeover', '1');
  if (mode.watch) query.set('watch', '1');
  // The VM's cluster (rows carry it); the server's default cluster when absent.
  if (mode.context) query.set('context', mode.context);
  const qs = query.toString();
  return `${scheme}//${location.host}${path}${qs ? `?${qs}` : ''}`;
}

/** How the UI reacts to a close: retry by itself, offer Take over, or stop and explain. */
export type CloseVerdict =
  | { kind: 'retry'; message: string }
  | { kind: 'taken-over'; message: string }
  | { kind: 'in-use'; message: string }
  | { kind: 'refused'; message: string }
  | { kind: 'not-running'; message: string }
  | { kind: 'closed'; message: string };

export function classifyClose(code: number, reason: string): CloseVerdict {
  switch (code) {
    case 4001:
      return { kind: 'taken-over', message: reason || 'Another viewer took over this console' };
    case 4029:
      return { kind: 'in-use', message: reason || 'Someone else is using this console' };
    case 4003:
    case 4000:
      return { kind: 'refused', message: reason || 'The console was refused' };
    case 4004:
    case 4009:
      return { kind: 'not-running', message: reason || 'The VM is not running' };
    case 1000:
      // The cluster ended the session: the VM stopped, rebooted into nothing, or a viewer outside Corral took
      // it. A retry sorts out which (it is refused with 4009 or 4029 then).
      return { kind: 'retry', message: reason || 'The console closed' };
    case 1001:
      return { kind: 'retry', message: reason || 'The server is restarting' };
    default:
      return {
        kind: 'retry',
        message: reason || (code === 1006 ? 'Lost the connection to Corral' : `The console closed (${code})`),
      };
  }
}

/** Reconnect delays: 0.5 s doubling to 15 s, with ±20 % jitter so many tabs do not reconnect in lockstep. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.8 + 0.4 * random()));
}
