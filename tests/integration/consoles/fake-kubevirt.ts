/**
 * A stand-in for virt-api's console subresources, for gateway tests that must not depend on the embedded
 * cluster: refuses like KubeVirt (Status JSON before the upgrade), echoes the subprotocol, kicks the previous
 * session of a VMI, and echoes bytes so a test can check what crossed the bridge.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeKubevirt {
  url: string;
  /** Bytes each accepted connection received, by connection index. */
  received: Buffer[][];
  headers: http.IncomingHttpHeaders[];
  urls: string[];
  /** Sends bytes to the newest connection of a VMI. */
  sendTo(kind: 'vnc' | 'console', name: string, data: Buffer): void;
  close(): Promise<void>;
}

const PATH =
  /^\/apis\/subresources\.kubevirt\.io\/v1\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/(vnc|console)$/;

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

export async function startFakeKubevirt(
  options: { echo?: boolean; greeting?: Record<string, Buffer> } = {},
): Promise<FakeKubevirt> {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has('plain.kubevirt.io') ? 'plain.kubevirt.io' : false),
  });
  const live = new Map<string, WebSocket>();
  const received: Buffer[][] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const urls: string[] = [];
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '', 'http://x');
    const m = PATH.exec(url.pathname);
    const refuse = (code: number, text: string, reason: string, message: string) => {
      const body = status(code, reason, message);
      socket.end(
        `HTTP/1.1 ${code} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    };
    if (!m) return refuse(404, 'Not Found', 'NotFound', 'the server could not find the requested resource');
    const [, ns, name, kind] = m as unknown as [string, string, string, 'vnc' | 'console'];
    if (name === 'stopped' || name === 'ghost')
      return refuse(404, 'Not Found', 'NotFound', `virtualmachineinstance.kubevirt.io "${name}" not found`);
    if (name === 'scheduling')
      return refuse(
        400,
        'Bad Request',
        'BadRequest',
        'Unable to connect to VirtualMachineInstance because phase is Scheduling instead of Running',
      );
    const key = `${kind}:${ns}/${name}`;
    if (url.searchParams.get('preserveSession') === 'true' && live.has(key))
      return refuse(503, 'Service Unavailable', 'ServiceUnavailable', 'Active VNC connection. Request denied.');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const index = received.length;
      received.push([]);
      headers.push(req.headers);
      urls.push(req.url ?? '');
      live.get(key)?.close(1000, '');
      live.set(key, ws);
      ws.on('close', () => {
        if (live.get(key) === ws) live.delete(key);
      });
      ws.on('message', (data: Buffer) => {
        received[index]!.push(data);
        if (options.echo !== false) ws.send(data, { binary: true });
      });
      const greeting = options.greeting?.[kind];
      if (greeting) ws.send(greeting, { binary: true });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    headers,
    urls,
    sendTo(kind, name, data) {
      for (const [key, ws] of live)
        if (key.startsWith(`${kind}:`) && key.endsWith(`/${name}`)) ws.send(data, { binary: true });
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
