/**
 * The console state shared by the WebSocket gateway (mounted by the custom server) and the tRPC procedures that
 * report it (who holds a console, the retained serial log). Both run in the same Node process; the instance hangs
 * off globalThis so a second copy of this module (dev reloads) still sees the same sessions and logs.
 */
import { SerialLogStore } from './serial-ring.js';
import { SessionRegistry } from './session-registry.js';

export interface ConsoleState {
  registry: SessionRegistry;
  serialLogs: SerialLogStore;
}

const KEY = Symbol.for('corral.consoles.state');

export function consoleState(): ConsoleState {
  const holder = globalThis as unknown as Record<symbol, ConsoleState | undefined>;
  holder[KEY] ??= { registry: new SessionRegistry(), serialLogs: new SerialLogStore() };
  return holder[KEY];
}
