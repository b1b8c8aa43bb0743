/**
 * The consoles plug-in: `attachToCorral` (discovered by src/server/start.ts) mounts the VNC and serial console
 * gateway and the CT terminal (`/api/ctty/`) on the Corral server's upgrade routing, with the server's kubeconfig,
 * identity and caches.
 */
import { findCt, podPhase } from '../domain/ct-rows';
import { CT_CONTAINER, ctShellCommand } from '../domain/ct-spec';
import type { CorralHost } from '../start';
import { createCtConsole, CT_CONSOLE_PREFIX } from './ct-console.js';
import { createConsoleGateway, type ConsoleGateway } from './gateway.js';

export { createConsoleGateway } from './gateway.js';
export type { ConsoleGateway, ConsoleGatewayOptions, ConsoleCaller, ClusterCredentials } from './gateway.js';
export { consoleState } from './state.js';
export { bridgeSockets } from './bridge.js';
export { CloseCode } from './close-codes.js';

export function attachToCorral(host: CorralHost): ConsoleGateway {
  const gateway = createConsoleGateway({
    cluster(context) {
      const current = host.kubeConfig.getCurrentContext();
      if (context && context !== current)
        throw new Error(`Unknown context ${JSON.stringify(context)}: this Corral serves ${current}`);
      return host.kubeConfig;
    },
    resolveCaller(req) {
      const identity = host.identityFor(req, host.services);
      return {
        login: identity.login,
        name: identity.name,
        admin: identity.admin,
        ...(identity.readOnlyReason ? { readOnlyReason: identity.readOnlyReason } : {}),
      };
    },
    // The watch cache knows whether the VM exists and its status: "Stopped" beats KubeVirt's "vmi not found".
    vmStatus: (namespace, name) => Promise.resolve(host.services.fleet.vmRow(namespace, name)?.status ?? null),
    // A browser cannot set X-Forwarded-Host on a WebSocket, and the front door drops it from untrusted peers.
    trustForwardedHost: true,
  });
  host.http.registerUpgrade('/api/vnc/', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  host.http.registerUpgrade('/api/tty/', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  const ctConsole = createCtConsole({
    cluster: () => host.kubeConfig,
    resolveCaller: (req) => {
      const identity = host.identityFor(req, host.services);
      return {
        login: identity.login,
        name: identity.name,
        admin: identity.admin,
        ...(identity.readOnlyReason ? { readOnlyReason: identity.readOnlyReason } : {}),
      };
    },
    ct(namespace, name) {
      const ct = findCt(host.services.deps, namespace, name);
      return ct ? { phase: podPhase(ct.pod), container: CT_CONTAINER, shell: ctShellCommand(ct.spec) } : null;
    },
    trustForwardedHost: true,
  });
  host.http.registerUpgrade(CT_CONSOLE_PREFIX, (req, socket, head) => ctConsole.handleUpgrade(req, socket, head));
  // Before the server destroys the sockets, so every browser gets the close frame with the reason.
  host.http.onClose(() => {
    gateway.close();
    ctConsole.close();
  });
  return gateway;
}
