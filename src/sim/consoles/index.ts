/**
 * The consoles module of the embedded cluster: KubeVirt's `vnc` (a real RFB 3.8 server drawing a text console)
 * and `console` (a serial getty and shell) WebSocket subresources, `vnc/screenshot`, and pod exec with
 * channel.k8s.io framing. See docs/sim-consoles.md.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawRoute, SimContext, SimModule, UpgradeRoute } from '../module.js';
import { ApiError } from '../store/errors.js';
import { encodePng } from './png.js';
import { matchExecPath, PodExec } from './pod-exec.js';
import { renderRgb, SCREEN_HEIGHT, SCREEN_WIDTH } from './rfb/render.js';
import { matchScreenshotPath, matchStreamPath, VmiConsoles } from './vmi-consoles.js';
import { refuseUpgrade } from './upgrade.js';

export { MIGRATED_CLOSE, TAKEOVER_CLOSE, VMI_STOPPED_CLOSE, PLAIN_KUBEVIRT } from './vmi-consoles.js';
export { EXEC_PROTOCOLS } from './pod-exec.js';
export { SCREEN_WIDTH, SCREEN_HEIGHT } from './rfb/render.js';

export class ConsolesModule implements SimModule {
  readonly name = 'consoles';
  private vmis: VmiConsoles | undefined;
  private exec: PodExec | undefined;

  readonly upgrades: UpgradeRoute[] = [
    {
      matches: (url) => matchStreamPath(url.pathname) !== undefined,
      handle: (_ctx, req, socket, head, url) =>
        this.withStarted(socket, () => this.vmis!.handleUpgrade(req, socket, head, url)),
    },
    {
      matches: (url) => matchExecPath(url.pathname) !== undefined,
      handle: (_ctx, req, socket, head, url) =>
        this.withStarted(socket, () => this.exec!.handleUpgrade(req, socket, head, url)),
    },
  ];

  readonly rawRoutes: RawRoute[] = [
    {
      matches: (url, method) => method === 'GET' && matchScreenshotPath(url.pathname) !== undefined,
      handle: (_ctx, _req, res, url) => this.screenshot(res, url),
    },
  ];

  start(ctx: SimContext): void {
    this.vmis = new VmiConsoles(ctx.store, ctx.clock);
    this.exec = new PodExec(ctx.store);
    this.vmis.start();
  }

  stop(): void {
    this.vmis?.stop();
    this.vmis = undefined;
    this.exec = undefined;
  }

  private withStarted(socket: Duplex, run: () => void): void {
    if (!this.vmis || !this.exec) {
      refuseUpgrade(
        socket,
        new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
      );
      return;
    }
    run();
  }

  private screenshot(res: ServerResponse, url: URL): void {
    const target = matchScreenshotPath(url.pathname)!;
    try {
      if (!this.vmis)
        throw new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request');
      const machine = this.vmis.screenshotOf(target.namespace, target.name);
      const png = encodePng(SCREEN_WIDTH, SCREEN_HEIGHT, renderRgb(machine.screen));
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
      res.end(png);
    } catch (err) {
      const apiError =
        err instanceof ApiError
          ? err
          : new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`);
      const body = JSON.stringify(apiError.toStatus());
      res.writeHead(apiError.code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    }
  }
}

/** Factory used by src/sim/modules.ts. */
export function consolesModule(): ConsolesModule {
  return new ConsolesModule();
}
