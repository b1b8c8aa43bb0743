/**
 * The guest-agent commands beyond the reads in agent.ts. `fsfreeze-freeze|thaw|status` are served by KubeVirt's VMI
 * `freeze`/`unfreeze` subresources and the freeze state it records (src/server/domain/vm-guest-freeze.ts). The
 * rest — `exec`, `exec-status`, `file-read`, `file-write`, `set-user-password`, `get-time`, `fstrim`, the
 * suspend and shutdown commands, `get-vcpus`, `get-memory-blocks`, `info` — have no KubeVirt subresource: virt-handler
 * passes a fixed set of agent calls and nothing else, so Corral cannot run them. They answer as PVE does when the
 * agent refuses a command (`VM 100 qmp command 'guest-exec' failed - The command guest-exec has been disabled for
 * this instance`), after the same checks as every agent call (a stopped VM, a VM without a connected agent).
 */
import { guestFreezeState, setGuestFrozen } from '@/server/domain/vm-guest-freeze';
import { requireGuestAgent } from '@/server/domain/vm-guest';
import { onlyParams } from '../qemu-params';
import { ProxmoxError } from '../wire';
import type { HttpMethod } from '../routing';
import { define, type EndpointContext, type Routes } from './context';
import { MONITOR, agent, deps } from './agent';

/** PVE's agent commands KubeVirt has no way to run, with the method PVE serves each under. */
export const AGENT_UNSERVED: readonly [HttpMethod, string, string[]][] = [
  ['POST', 'exec', ['command', 'input-data']],
  ['GET', 'exec-status', ['pid']],
  ['GET', 'file-read', ['file']],
  ['POST', 'file-write', ['file', 'content', 'encode']],
  ['POST', 'set-user-password', ['username', 'password', 'crypted']],
  ['GET', 'get-time', []],
  ['GET', 'get-vcpus', []],
  ['GET', 'get-memory-blocks', []],
  ['GET', 'get-memory-block-info', []],
  ['GET', 'info', []],
  ['POST', 'fstrim', []],
  ['POST', 'shutdown', []],
  ['POST', 'suspend-disk', []],
  ['POST', 'suspend-ram', []],
  ['POST', 'suspend-hybrid', []],
];

/** What qemu-ga answers for a command its host has blocked, as PVE passes it on. */
export function disabledCommand(vmid: number | string, command: string): ProxmoxError {
  return new ProxmoxError(
    500,
    `VM ${vmid} qmp command 'guest-${command}' failed - The command guest-${command} has been disabled for this instance`,
  );
}

async function refuse(ctx: EndpointContext, command: string, params: string[]): Promise<never> {
  onlyParams(ctx.args, params);
  // The same order as PVE: the VM must run and its agent answer before the command itself is looked at.
  await agent(ctx, (ns, name) => requireGuestAgent(deps(ctx), ns, name));
  throw disabledCommand(ctx.path.vmid ?? '', command);
}

export function registerAgentWrites(table: Routes): void {
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/agent/fsfreeze-status', {
    privilege: MONITOR,
    handle: async (ctx) => {
      onlyParams(ctx.args, []);
      return { result: await agent(ctx, (ns, name) => guestFreezeState(deps(ctx), ns, name)) };
    },
  });
  for (const [verb, frozen] of [
    ['fsfreeze-freeze', true],
    ['fsfreeze-thaw', false],
  ] as const)
    define(table, 'POST', `/nodes/{node}/qemu/{vmid}/agent/${verb}`, {
      privilege: MONITOR,
      handle: async (ctx) => {
        onlyParams(ctx.args, []);
        return { result: await agent(ctx, (ns, name) => setGuestFrozen(deps(ctx), ns, name, frozen)) };
      },
    });
  for (const [method, command, params] of AGENT_UNSERVED)
    define(table, method, `/nodes/{node}/qemu/{vmid}/agent/${command}`, {
      privilege: MONITOR,
      handle: (ctx) => refuse(ctx, command, params),
    });
}
