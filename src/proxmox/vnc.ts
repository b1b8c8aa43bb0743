/**
 * Consoles the Proxmox way: `POST …/vncproxy` hands out a short-lived `PVEVNC:` ticket; the client then opens the
 * WebSocket `…/vncwebsocket?port=…&vncticket=…`, which is passed through to Corral's own VNC bridge
 * (`/api/vnc/{ns}/{name}`) — so noVNC-based Proxmox clients get the VM's real framebuffer.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { authenticate, type Principal } from './auth/authenticate';
import { hasPrivilege } from './auth/roles';
import { requestFacts, type ProxmoxHandler } from './handler';
import { createTermproxyTranslator, verifyTermTicket } from './termproxy';
import { redactError } from './redact';
import { API_PREFIX, ProxmoxError, reasonPhrase } from './wire';

export const VNC_TICKET_LIFETIME_S = 60;
/** PVE's VNC ports start at 5900; the number only has to round-trip through the client. */
export const VNC_PORT = 5900;

export function vncTicketFor(proxmox: Pick<ProxmoxHandler, 'auth'>, principal: Principal, vmid: number): string {
  return proxmox.auth.signer.purposeTicket('PVEVNC', principal.tokenId ?? principal.userid, `vnc/${vmid}`);
}

const VNC_PATH = /^\/nodes\/([^/]+)\/qemu\/(\d+)\/vncwebsocket$/;

function refuse(socket: Duplex, err: unknown): void {
  // Refusals are answered before (or instead of) a session; nobody needs internal addresses in them.
  const pve = redactError(err);
  const body = JSON.stringify({ data: null, message: `${pve.message}\n` });
  socket.end(
    `HTTP/1.1 ${pve.status} ${reasonPhrase(pve.message)}\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The upgrade handler for `/api2/json/…`: checks credentials, the VM.Console privilege and the vncticket. A vncproxy
 * ticket rewrites the request to Corral's VNC bridge path and hands it to `forward` (the server's upgrade routing);
 * a termproxy ticket (same endpoint, as in PVE) is served by the termproxy translator, which reaches Corral's serial
 * console through `forward` as well. `close()` ends the translator's sessions (server shutdown).
 */
export function vncUpgradeHandler(
  proxmox: ProxmoxHandler,
  forward: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
) {
  const termproxy = createTermproxyTranslator(proxmox, forward);
  const handler = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = VNC_PATH.exec(url.pathname.slice(API_PREFIX.length));
      if (!match)
        throw new ProxmoxError(
          501,
          `Method 'GET ${url.pathname.slice(API_PREFIX.length)}' not implemented as a WebSocket`,
        );
      const principal = authenticate(proxmox.auth, requestFacts(req, 'GET'));
      if (!hasPrivilege(principal.role, 'VM.Console'))
        throw new ProxmoxError(403, `Permission check failed (/vms/${match[2]}, VM.Console)`);
      const vm = proxmox.state.resolveVm(decodeURIComponent(match[1] ?? ''), match[2] ?? '');
      const ticket = url.searchParams.get('vncticket') ?? '';
      const userid = principal.tokenId ?? principal.userid;
      if (proxmox.auth.signer.verifyPurposeTicket('PVEVNC', userid, `vnc/${vm.vmid}`, ticket, VNC_TICKET_LIFETIME_S)) {
        req.url = `/api/vnc/${encodeURIComponent(vm.ref.namespace)}/${encodeURIComponent(vm.ref.name)}`;
        forward(req, socket, head);
        return;
      }
      if (verifyTermTicket(proxmox, userid, vm.vmid, ticket)) {
        termproxy.handleUpgrade(req, socket, head, {
          vmid: vm.vmid,
          namespace: vm.ref.namespace,
          name: vm.ref.name,
          userid,
        });
        return;
      }
      throw new ProxmoxError(401, 'permission denied - invalid vnc ticket');
    } catch (err) {
      refuse(socket, err);
    }
  };
  return Object.assign(handler, { close: () => termproxy.close() });
}
