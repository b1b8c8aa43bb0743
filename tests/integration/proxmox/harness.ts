/**
 * Proxmox test harness: the embedded cluster and Corral (API only) in this process, with the Proxmox handler
 * served over HTTPS (a fresh self-signed certificate, TLS 1.3 available) on a random loopback port, the way
 * `corral proxmox serve --cert --key` serves it. `px()` is a small client that speaks the Proxmox wire format.
 */
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { createProxmoxHandler, type ProxmoxHandler } from '@/proxmox/index';
import { parseGrants } from '@/proxmox/auth/tokens';
import { selfSignedTls, serveProxmox, type ServingProxmox } from '@/proxmox/serve';

export const ADMIN_SECRET = '6f1c2a9e-4b7d-4c1e-9a3f-2d5e8b7c0a11';
export const VIEWER_SECRET = '0c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c66';
export const TOKEN_CONFIG = `root@pam!ci=${ADMIN_SECRET} monitor@pve!ro=${VIEWER_SECRET}:Viewer`;

export interface ProxmoxHarness {
  sim: EmbeddedCluster;
  corral: RunningCorral;
  proxmox: ProxmoxHandler;
  https: ServingProxmox;
  gaps: string[];
  logs: string[];
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /**
   * Stops Corral and its Proxmox door and starts new ones on the same embedded cluster (a restart: nothing kept in
   * memory survives); `corral`, `proxmox`, `https`, `url` and `port` then name the new ones.
   */
  restartCorral(): Promise<void>;
  close(): Promise<void>;
}

export async function startProxmoxHarness(options: { tokens?: string; speed?: number } = {}): Promise<ProxmoxHarness> {
  // Self-signed certificate: the clients are told to skip verification, as Proxmox users do.
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: options.speed ?? 50 });
  const logs: string[] = [];
  const door = await startDoor(sim, options, logs);
  const h: ProxmoxHarness = {
    sim,
    ...door,
    logs,
    get gaps() {
      return logs.filter((l) => l.startsWith('[proxmox-gap]'));
    },
    async restartCorral() {
      await stopDoor(h);
      Object.assign(h, await startDoor(sim, options, logs));
    },
    async close() {
      await stopDoor(h);
      await sim.close();
    },
  };
  return h;
}

async function startDoor(sim: EmbeddedCluster, options: { tokens?: string }, logs: string[]) {
  const corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: 5000,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
  });
  await corral.cluster.cache.waitForSync(20_000);
  const proxmox = createProxmoxHandler({
    services: corral.services,
    grants: parseGrants(options.tokens ?? TOKEN_CONFIG),
    log: (l) => logs.push(l),
  });
  corral.http.mountProxmox((req, res) => proxmox.handle(req, res));
  const https = await serveProxmox({
    handle: proxmox.handle,
    host: '127.0.0.1',
    port: 0,
    tls: await selfSignedTls('localhost'),
  });
  return { corral, proxmox, https, url: https.url, port: Number(new URL(https.url).port) };
}

async function stopDoor(h: Pick<ProxmoxHarness, 'https' | 'proxmox' | 'corral'>): Promise<void> {
  await h.https.close();
  h.proxmox.close();
  await h.corral.close();
}

export interface PxReply {
  status: number;
  reason: string;
  contentType: string | null;
  body: { data?: unknown; message?: string; errors?: Record<string, string> };
}

/** Minimal Proxmox client over fetch: form-encoded bodies, token auth, the reason phrase kept. */
export function px(baseUrl: string, auth: { token?: string; cookie?: string; csrf?: string } = {}) {
  const call = async (method: string, path: string, params: Record<string, string | number> = {}): Promise<PxReply> => {
    const form = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    const headers: Record<string, string> = {};
    if (auth.token) headers.authorization = `PVEAPIToken=${auth.token}`;
    if (auth.cookie) headers.cookie = `PVEAuthCookie=${encodeURIComponent(auth.cookie)}`;
    if (auth.csrf) headers.csrfpreventiontoken = auth.csrf;
    const withQuery = method === 'GET' || method === 'DELETE';
    const url = `${baseUrl}/api2/json${path}${withQuery && form.size ? `?${form}` : ''}`;
    if (!withQuery) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, body: withQuery ? undefined : form.toString() });
    const text = await res.text();
    return {
      status: res.status,
      reason: res.statusText,
      contentType: res.headers.get('content-type'),
      body: text ? JSON.parse(text) : {},
    };
  };
  return {
    get: (path: string, params?: Record<string, string | number>) => call('GET', path, params),
    post: (path: string, params?: Record<string, string | number>) => call('POST', path, params),
    put: (path: string, params?: Record<string, string | number>) => call('PUT', path, params),
    del: (path: string, params?: Record<string, string | number>) => call('DELETE', path, params),
  };
}

/** Polls a task until it stops; returns its final status object. */
export async function waitTask(
  client: ReturnType<typeof px>,
  upid: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const node = upid.split(':')[1] ?? '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.get(`/nodes/${node}/tasks/${encodeURIComponent(upid)}/status`);
    const data = r.body.data as Record<string, unknown> | undefined;
    if (r.status !== 200 || !data) throw new Error(`task status ${r.status} ${r.reason}`);
    if (data.status === 'stopped') return data;
    if (Date.now() > deadline) throw new Error(`task ${upid} still running after ${timeoutMs} ms`);
    await new Promise((r2) => setTimeout(r2, 100));
  }
}

/** A Multus network (NetworkAttachmentDefinition) in tailvm, which a NIC bridged to anything but vmbr0 names. */
export async function createNetwork(h: ProxmoxHarness, name: string): Promise<void> {
  const res = await fetch(`${h.sim.url}/apis/k8s.cni.cncf.io/v1/namespaces/tailvm/network-attachment-definitions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'k8s.cni.cncf.io/v1',
      kind: 'NetworkAttachmentDefinition',
      metadata: { name, namespace: 'tailvm' },
      spec: { config: JSON.stringify({ cniVersion: '0.3.1', type: 'bridge', bridge: 'br0' }) },
    }),
  });
  if (res.status !== 201) throw new Error(`creating network ${name}: ${res.status} ${await res.text()}`);
}
