/**
 * The embedded cluster's apiserver on node:http: URL grammar (kube-sim-spec §4), dispatch to discovery, OpenAPI,
 * the generic REST verbs, KubeVirt subresource verbs, metrics.k8s.io, module routes and WebSocket upgrades,
 * with fault injection in front of everything except the `/_sim` control paths.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FaultInjector } from '../faults/fault-injector.js';
import type { SimContext, SimModule, SubresourceRoute } from '../module.js';
import { ApiError, notFound } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { resourceKey } from '../store/types.js';
import type { KindSpec } from '../resources/kinds.js';
import { handleControl } from './control.js';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  METRICS_GROUP,
  SUBRESOURCES_GROUP,
  type DiscoveryInput,
} from './discovery.js';
import { openApiGroupVersion, openApiRoot } from './openapi.js';
import { servePodLog } from './pod-log.js';
import { ListCache } from './list-cache.js';
import { REVIEW_RESOURCES, serveReview } from './access-reviews.js';
import { authorize, userOf, verbOf, type SimUser } from './rbac.js';
import {
  handleCreate,
  handleDelete,
  handleDeleteCollection,
  handleGet,
  handleList,
  handlePatch,
  handleUpdate,
  type ApiContext,
  type BodyValidator,
  type ResourceCall,
} from './resource-handlers.js';
import { handleScale } from './scale.js';
import { parseLabelSelector } from './selectors.js';
import { DEFAULT_WATCH_SETTINGS, WatchRegistry, type WatchSettings } from './watch.js';
import { methodNotAllowed, notFoundPath, parseJson, readBody, sendError, sendJson, sendText } from './wire.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: 'corral-sim',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** The request target as a URL; the path is taken verbatim (a leading `//` is a path, not a host). */
function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  if (!target.startsWith('/')) throw new ApiError(400, 'BadRequest', `invalid request target "${target}"`);
  try {
    return new URL(`http://localhost${target}`);
  } catch {
    throw new ApiError(400, 'BadRequest', `invalid request target "${target}"`);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError(400, 'BadRequest', `invalid path segment "${segment}"`);
  }
}

export interface ApiServerOptions {
  ctx: SimContext;
  modules: SimModule[];
  faults: FaultInjector;
  validate: BodyValidator;
  watchSettings?: Partial<WatchSettings>;
}

export interface ApiServer {
  server: Server;
  watches: WatchRegistry;
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const { ctx, modules, faults } = options;
  const watches = new WatchRegistry();
  faults.attachWatchDropper(() => watches.closeAll());
  faults.attachLogCompactor(() => ctx.store.compact());
  const admissionHooks = modules.flatMap((m) => m.admission ?? []);
  const lists = new ListCache(ctx.store);
  const api: ApiContext = {
    store: ctx.store,
    lists,
    admit: (request) => {
      const warnings: string[] = [];
      for (const hook of admissionHooks) {
        if (!hook.kinds.some((k) => k.group === request.group && k.kind === request.kind)) continue;
        const result = hook.admit(ctx, request);
        if (result?.warnings) warnings.push(...result.warnings);
      }
      return warnings;
    },
    watches,
    watchSettings: {
      ...DEFAULT_WATCH_SETTINGS,
      watchList: () => ctx.settings.watchList !== false,
      ...options.watchSettings,
    },
    validate: options.validate,
  };
  const subresourceRoutes = modules.flatMap((m) => m.subresources ?? []);
  const rawRoutes = modules.flatMap((m) => m.rawRoutes ?? []);
  const upgrades = modules.flatMap((m) => m.upgrades ?? []);
  const metricsProviders = modules.flatMap((m) => (m.metrics ? [m.metrics] : []));

  const discoveryInput = (): DiscoveryInput => ({
    kinds: ctx.store.allTypes() as KindSpec[],
    subresourceRoutes,
    metricsEnabled: ctx.settings.metricsServer,
    serverAddress: new URL(ctx.baseUrl()).host,
  });

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const user = userOf(ctx.store, req);
    for (const raw of rawRoutes) {
      if (raw.matches(url, method)) {
        await raw.handle(ctx, req, res, url);
        return;
      }
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/version') return sendJson(res, 200, SERVER_VERSION);
    if (path === '/healthz' || path === '/livez' || path === '/readyz') return sendText(res, 200, 'ok');
    if (path === '/api') return sendJson(res, 200, apiVersions(discoveryInput().serverAddress));
    if (path === '/apis') return sendJson(res, 200, apiGroupList(discoveryInput()));
    if (path === '/openapi/v3') return sendJson(res, 200, openApiRoot(discoveryInput()));
    if (path.startsWith('/openapi/v3/')) {
      const doc = openApiGroupVersion(discoveryInput(), path.slice('/openapi/v3/'.length));
      if (!doc) throw notFoundPath();
      return sendJson(res, 200, doc);
    }
    const segments = path.split('/').slice(1).map(decodeSegment);
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (segments[0] === 'api') {
      group = '';
      version = segments[1];
      rest = segments.slice(2);
    } else if (segments[0] === 'apis') {
      group = segments[1]!;
      version = segments[2];
      rest = segments.slice(3);
      if (version === undefined) {
        const doc = apiGroup(discoveryInput(), group);
        if (!doc) throw notFoundPath();
        return sendJson(res, 200, doc);
      }
    } else throw notFoundPath();
    if (version === undefined) throw notFoundPath();
    if (rest.length === 0) {
      const doc = apiResourceList(discoveryInput(), group, version);
      if (!doc) throw notFoundPath();
      return sendJson(res, 200, doc);
    }
    if (group === SUBRESOURCES_GROUP) return serveSubresource(req, res, url, version, rest, user);
    if (group === METRICS_GROUP) return serveMetrics(req, res, url, version, rest, user);
    if (REVIEW_RESOURCES[group]) return serveReview(req, res, group, version, rest, { store: ctx.store, user });
    return serveResource(req, res, url, group, version, rest, user);
  }

  function findKind(group: string, version: string, plural: string): KindSpec | undefined {
    return (ctx.store.allTypes() as KindSpec[]).find(
      (k) => k.group === group && k.plural === plural && (k.version === version || k.aliasVersions?.includes(version)),
    );
  }

  async function serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    group: string,
    version: string,
    rest: string[],
    user: SimUser,
  ): Promise<void> {
    const query = url.searchParams;
    // Deprecated `/watch/` path prefix: same as `?watch=true`.
    if (rest[0] === 'watch') {
      rest = rest.slice(1);
      query.set('watch', 'true');
    }
    let namespace: string | undefined;
    let type: KindSpec | undefined;
    let tail: string[];
    const nsType = findKind(group, version, 'namespaces');
    if (
      rest[0] === 'namespaces' &&
      rest.length >= 3 &&
      !(nsType && ['status', 'finalize'].includes(rest[2]!) && rest.length === 3)
    ) {
      namespace = rest[1]!;
      type = findKind(group, version, rest[2]!);
      if (!type?.namespaced) throw notFoundPath();
      tail = rest.slice(3);
    } else {
      type = findKind(group, version, rest[0]!);
      if (!type) throw notFoundPath();
      tail = rest.slice(1);
    }
    const name = tail[0];
    const subresource = tail.length > 1 ? tail.slice(1).join('/') : undefined;
    const podLog = subresource === 'log' && type.kind === 'Pod' && type.group === '';
    const scale = subresource === 'scale' && (type.extraSubresources ?? []).some((s) => s.name === 'scale');
    if (
      name === '' ||
      (subresource !== undefined && !(subresource === 'status' && type.hasStatus) && !podLog && !scale)
    )
      throw notFoundPath();
    if (!type.namespaced && namespace) throw notFoundPath();
    // Cluster-wide access to a namespaced kind is list/watch only.
    const call: ResourceCall = { type, version, namespace, name, subresource, query, req, res };
    const method = req.method ?? 'GET';
    const watching = query.get('watch') === 'true' || query.get('watch') === '1';
    authorize(ctx.store, user, {
      verb: verbOf(method, name !== undefined, watching),
      group,
      resource: type.plural,
      ...(subresource ? { subresource } : {}),
      ...(namespace ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    });
    if (name === undefined) {
      if (method === 'GET') return handleList(api, call);
      if (method === 'POST') {
        if (type.namespaced && !namespace)
          throw new ApiError(
            405,
            'MethodNotAllowed',
            'the server does not allow this method on the requested resource',
          );
        return handleCreate(api, call);
      }
      if (method === 'DELETE') return handleDeleteCollection(api, call);
      throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    }
    if (type.namespaced && !namespace) throw notFoundPath();
    if (podLog) {
      if (method !== 'GET')
        throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      return servePodLog(res, ctx.store.mustGet(resourceKey('', 'pods'), namespace, name), query);
    }
    if (scale) return handleScale(api, call);
    if (method === 'GET') return handleGet(api, call);
    if (method === 'PUT') return handleUpdate(api, call);
    if (method === 'PATCH') return handlePatch(api, call);
    if (method === 'DELETE' && !subresource) return handleDelete(api, call);
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  async function serveSubresource(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    version: string,
    rest: string[],
    user: SimUser,
  ): Promise<void> {
    if (version !== 'v1') throw notFoundPath();
    if (rest.length === 1 && rest[0] === 'version')
      return sendJson(res, 200, {
        gitVersion: 'v1.5.0',
        gitCommit: 'corral-sim',
        gitTreeState: 'clean',
        buildDate: '2025-01-01T00:00:00Z',
        goVersion: 'go1.23.4',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
    if (rest.length === 1 && rest[0] === 'healthz') return sendJson(res, 200, { apiserver: { connectivity: 'ok' } });
    if (rest[0] !== 'namespaces' || rest.length < 5) throw notFoundPath();
    const [, namespace, resource, name] = rest as [string, string, string, string];
    const verb = rest.slice(4).join('/');
    const routes = subresourceRoutes.filter((r: SubresourceRoute) => r.resource === resource && r.verb === verb);
    if (!routes.length) throw notFoundPath();
    const method = req.method ?? 'GET';
    const chosen = routes.find((r) => r.methods.includes(method));
    if (!chosen) throw methodNotAllowed(method.toLowerCase(), `${resource}/${verb}`);
    authorize(ctx.store, user, {
      verb: method === 'GET' ? 'get' : 'update',
      group: SUBRESOURCES_GROUP,
      resource,
      subresource: verb,
      namespace,
      name,
    });
    const text = await readBody(req);
    const body = text.trim() ? parseJson(text) : undefined;
    const result = await chosen.handle(ctx, { namespace, name, method, body, query: url.searchParams });
    if (result.body === undefined) {
      res.writeHead(result.status, { 'Content-Length': '0' });
      res.end();
    } else sendJson(res, result.status, result.body);
  }

  function serveMetrics(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    version: string,
    rest: string[],
    user: SimUser,
  ): void {
    if (!ctx.settings.metricsServer || version !== 'v1beta1') throw notFoundPath();
    const method = req.method ?? 'GET';
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1')
      throw methodNotAllowed('watch', 'pods.metrics.k8s.io');
    if (method !== 'GET') throw methodNotAllowed(method.toLowerCase(), 'metrics.k8s.io');
    let namespace: string | undefined;
    let r = rest;
    if (r[0] === 'namespaces' && r.length >= 3) {
      namespace = r[1];
      r = r.slice(2);
    }
    const resource = r[0];
    const name = r[1];
    if ((resource !== 'nodes' && resource !== 'pods') || r.length > 2 || (resource === 'nodes' && namespace))
      throw notFoundPath();
    authorize(ctx.store, user, {
      verb: name === undefined ? 'list' : 'get',
      group: METRICS_GROUP,
      resource,
      ...(namespace ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
    });
    const selector = parseLabelSelector(url.searchParams.get('labelSelector'));
    let items: KObject[] =
      resource === 'nodes'
        ? metricsProviders.flatMap((p) => p.nodeMetrics())
        : metricsProviders.flatMap((p) => p.podMetrics(namespace));
    if (namespace) items = items.filter((i) => i.metadata.namespace === namespace);
    if (selector) items = items.filter(selector);
    const kind = resource === 'nodes' ? 'NodeMetrics' : 'PodMetrics';
    if (name !== undefined) {
      const found = items.find((i) => i.metadata.name === name);
      if (!found) throw notFound(METRICS_GROUP, resource, name);
      return sendJson(res, 200, found);
    }
    sendJson(res, 200, { kind: `${kind}List`, apiVersion: `${METRICS_GROUP}/v1beta1`, metadata: {}, items });
  }

  const server = createServer({ keepAlive: true }, (req, res) => {
    void (async () => {
      try {
        const url = requestUrl(req);
        if (url.pathname.startsWith('/_sim/')) {
          await handleControl({ ctx, faults, watches }, req, res, url);
          return;
        }
        const decision = faults.decide(url.pathname, { method: req.method, query: url.searchParams });
        if (decision.action === 'hang') return; // the socket stays open until the client gives up or close()
        if (decision.action === 'refuse') {
          req.socket.destroy();
          return;
        }
        if (decision.delayMs > 0) await new Promise((r) => setTimeout(r, decision.delayMs));
        if (decision.action === 'fail') throw decision.error;
        await route(req, res, url);
      } catch (err) {
        sendError(res, err);
      }
    })();
  });

  // Long-lived keep-alive like the real apiserver's Go server: a short idle timeout races with clients reusing the
  // connection (they see "other side closed" mid-request under load).
  server.keepAliveTimeout = 65_000;
  server.on('close', () => lists.close());
  server.headersTimeout = 66_000;

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let url: URL;
    try {
      url = requestUrl(req);
    } catch {
      socket.destroy();
      return;
    }
    const decision = faults.decide(url.pathname);
    if (decision.action === 'hang') return;
    if (decision.action === 'refuse' || decision.action === 'fail') {
      socket.destroy();
      return;
    }
    const route = upgrades.find((u) => u.matches(url));
    if (!route) {
      const body = JSON.stringify(notFoundPath().toStatus());
      socket.end(
        `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    try {
      route.handle(ctx, req, socket, head, url);
    } catch (err) {
      console.error('[sim] upgrade failed:', err);
      socket.destroy();
    }
  });

  return { server, watches };
}
