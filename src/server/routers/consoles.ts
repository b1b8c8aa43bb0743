/**
 * Console metadata for the UI and API users: the holder of each console of a VM (the Console tab shows it and
 * offers Take over) and the serial output Corral relayed (the last 256 KiB, shown in the Terminal tab and
 * downloadable). The consoles themselves are WebSockets at /api/vnc and /api/tty (src/server/consoles).
 */
import { consoleState } from '../consoles/state.js';
import type { ConsoleHolder as Holder } from '../consoles/session-registry.js';
import { VmRef } from '../schemas/common';
import { ConsoleSessions, SerialLog, SerialLogInput } from '../schemas/consoles';
import { publicProcedure, router } from '../trpc';

const tags = ['consoles'];

function publicHolder(h: Holder | null) {
  return h ? { kind: h.kind, login: h.login, displayName: h.displayName, readOnly: h.readOnly, since: h.since } : null;
}

export const consolesRouter = router({
  sessions: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/vms/{namespace}/{name}/console-sessions',
        tags,
        summary: 'Who holds the VNC and serial consoles of a VM',
      },
    })
    .input(VmRef)
    .output(ConsoleSessions)
    .query(({ ctx, input }) => {
      ctx.services.vms.row(input.namespace, input.name); // 404 for a VM that does not exist
      const { registry } = consoleState();
      const context = ctx.services.cluster.info.context;
      return {
        vnc: publicHolder(registry.holder('vnc', input.namespace, input.name, context)),
        serial: publicHolder(registry.holder('serial', input.namespace, input.name, context)),
      };
    }),

  serialLog: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/vms/{namespace}/{name}/console-log',
        tags,
        summary: 'The last 256 KiB of serial output Corral relayed for a VM',
      },
    })
    .input(SerialLogInput)
    .output(SerialLog)
    .query(({ ctx, input }) => {
      ctx.services.vms.row(input.namespace, input.name); // 404 for a VM that does not exist
      const bytes = consoleState().serialLogs.read(input.namespace, input.name, ctx.services.cluster.info.context);
      return {
        namespace: input.namespace,
        name: input.name,
        bytes: bytes.length,
        format: input.format,
        log: input.format === 'base64' ? bytes.toString('base64') : bytes.toString('utf8'),
      };
    }),
});
