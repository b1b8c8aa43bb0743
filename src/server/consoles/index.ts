/**
 * The consoles plug-in: `attachToCorral` (discovered by src/server/start.ts) mounts the VNC and serial console
 * gateway and the CT terminal (`/api/ctty/`) on the Corral server's upgrade routing, with the server's kubeconfig,
 * identity and caches.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeCluster } from '../cluster';
import { findCt, podPhase } from '../domain/ct-rows';
import { CT_CONTAINER, ctShellCommand } from '../domain/ct-spec';
import { registryOf } from '../domain/registry';
import type { CorralServices } from '../domain/services';
import type { CorralHost } from '../start';
import { createCtConsole, CT_CONSOLE_PREFIX } from './ct-console.js';
import { createConsoleGateway, type ConsoleGateway } from './gateway.js';

export { createConsoleGateway } from './gateway.js';
export type { ConsoleGateway, ConsoleGatewayOptions, ConsoleCaller, ClusterCredentials } from './gateway.js';
export { consoleState } from './state.js';
export { bridgeSockets } from './bridge.js';
export { CloseCode } from './close-codes.js';

/**
 * The served cluster a console URL's `context` names (default: the first): its services and kubeconfig. An unknown
 * context throws the registry's message naming it and the served ones, as the REST routes answer 404.
 */
function servedCluster(host: CorralHost, context: string | undefined): { services: CorralServices; kc: KubeConfig } {
  const services = registryOf(host.services).get(context);
  if (services === host.services) return { services, kc: host.kubeConfig };
  // Every further cluster is a KubeCluster built from its own kubeconfig (clusters.ts): connect with that.
  if (!(services.cluster instanceof KubeCluster))
    throw new Error(`context ${services.cluster.info.context} has no kubeconfig for consoles`);
  return { services, kc: services.cluster.kubeConfig };
}

export function attachToCorral(host: CorralHost): ConsoleGateway {
  const gateway = createConsoleGateway({
    cluster: (context) => servedCluster(host, context).kc,
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
    vmStatus: (namespace, name, context) =>
      Promise.resolve(servedCluster(host, context).services.fleet.vmRow(namespace, name)?.status ?? null),
    // A browser cannot set X-Forwarded-Host on a WebSocket, and the front door drops it from untrusted peers.
    trustForwardedHost: true,
  });
  host.http.registerUpgrade('/api/vnc/', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  host.http.registerUpgrade('/api/tty/', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  const ctConsole = createCtConsole({
    cluster: (context) => servedCluster(host, context).kc,
    resolveCaller: (req) => {
      const identity = host.identityFor(req, host.services);
      return {
        login: identity.login,
        name: identity.name,
        admin: identity.admin,
        ...(identity.readOnlyReason ? { readOnlyReason: identity.readOnlyReason } : {}),
      };
    },
    ct(namespace, name, context) {
      const ct = findCt(servedCluster(host, context).services.deps, namespace, name);
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
