/**
 * The Proxmox VE-compatible API as a Corral plug-in: `attachToCorral` (found by src/server/start.ts) mounts it at
 * `/api2/json/` on Corral's own server; `createProxmoxHandler` serves it anywhere else (the standalone
 * `corral proxmox serve`, tests).
 */
import type { CorralHost } from '@/server/start';
import { createProxmoxHandler } from './handler';
import { vncUpgradeHandler } from './vnc';

export { createProxmoxHandler, type ProxmoxHandler, type ProxmoxOptions } from './handler';

export function attachToCorral(host: CorralHost): void {
  const proxmox = createProxmoxHandler({ services: host.services });
  host.http.mountProxmox((req, res) => proxmox.handle(req, res));
  // vncwebsocket: checked here, then re-dispatched to the server's own /api/vnc/ bridge (consoles plug-in), or, for a
  // termproxy ticket, translated onto its /api/tty/ serial console.
  const upgrades = vncUpgradeHandler(proxmox, (req, socket, head) =>
    host.http.server.emit('upgrade', req, socket, head),
  );
  host.http.registerUpgrade('/api2/json/', upgrades);
  host.http.server.once('close', () => {
    upgrades.close();
    proxmox.close();
  });
}
