/**
 * Acceptance against the real client: noVNC 1.7 (core/rfb.js from node_modules) running in Chromium connects to
 * the VNC subresource with `plain.kubevirt.io`, learns the desktop name, paints a non-blank canvas, and the
 * canvas changes when keys are typed and after Ctrl-Alt-Del.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EmbeddedCluster } from '../../../src/sim/index.js';
import { plantVmi, startConsolesCluster, vncPath, wsUrl } from './harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const NOVNC = join(process.cwd(), 'node_modules/@novnc/novnc');

let cluster: EmbeddedCluster;
let pageServer: Server;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}; set CHROMIUM_PATH`);
  cluster = await startConsolesCluster(20);
  plantVmi(cluster, 'web', { ip: '10.244.1.17' });
  pageServer = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><div id="screen" style="width:640px;height:400px"></div>
<script type="module">
import RFB from '/novnc/core/rfb.js';
window.events = [];
const target = new URLSearchParams(location.search).get('ws');
const rfb = new RFB(document.getElementById('screen'), target, { wsProtocols: ['plain.kubevirt.io'] });
rfb.addEventListener('connect', () => window.events.push('connect'));
rfb.addEventListener('disconnect', (e) => window.events.push('disconnect:' + e.detail.clean));
rfb.addEventListener('desktopname', (e) => window.events.push('name:' + e.detail.name));
window.rfb = rfb;
</script>`);
      return;
    }
    const file = normalize(join(NOVNC, path.replace(/^\/novnc\//, '')));
    if (!path.startsWith('/novnc/') || !file.startsWith(NOVNC) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/javascript' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  browser = await chromium.launch({ executablePath: CHROMIUM });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (pageServer ? pageServer.close(() => r()) : r()));
  await cluster?.close();
});

/** Canvas statistics: how many pixels are not black, and a cheap fingerprint of the whole image. */
function canvasStats(page: Page): Promise<{ width: number; height: number; lit: number; hash: number }> {
  return page.evaluate(() => {
    const canvas = document.querySelector('#screen canvas') as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let lit = 0;
    let hash = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i]! + data[i + 1]! + data[i + 2]! > 0) lit++;
      hash = (hash * 31 + data[i]! + data[i + 1]! * 3 + data[i + 2]! * 7) | 0;
    }
    return { width: canvas.width, height: canvas.height, lit, hash };
  });
}

it('noVNC 1.7 connects, shows the console, and the canvas follows typed keys and Ctrl-Alt-Del', async () => {
  const page = await browser.newPage();
  await page.goto(`${pageUrl}?ws=${encodeURIComponent(wsUrl(cluster, vncPath('web')))}`);
  await page.waitForFunction(() => (window as unknown as { events: string[] }).events.includes('connect'), undefined, {
    timeout: 15_000,
  });
  const events = await page.evaluate(() => (window as unknown as { events: string[] }).events);
  expect(events).toContain('name:web');
  await page.waitForFunction(
    () => {
      const c = document.querySelector('#screen canvas') as HTMLCanvasElement | null;
      if (!c || c.width !== 640) return false;
      const d = c.getContext('2d')!.getImageData(0, 0, 640, 16).data;
      return d.some((v, i) => i % 4 !== 3 && v > 0); // the status bar has been painted
    },
    undefined,
    { timeout: 15_000 },
  );
  const before = await canvasStats(page);
  expect([before.width, before.height]).toEqual([640, 400]);
  expect(before.lit).toBeGreaterThan(640 * 16);

  await page.evaluate(() => {
    const rfb = (window as unknown as { rfb: { sendKey(keysym: number, code: string | null): void } }).rfb;
    for (const ch of 'root') rfb.sendKey(ch.charCodeAt(0), null);
  });
  await expect.poll(async () => (await canvasStats(page)).hash, { timeout: 10_000 }).not.toBe(before.hash);
  const typed = await canvasStats(page);
  expect(typed.lit).toBeGreaterThan(before.lit);

  await page.evaluate(() => (window as unknown as { rfb: { sendCtrlAltDel(): void } }).rfb.sendCtrlAltDel());
  // The reboot clears the typed text and boots: the picture changes again and stays connected.
  await expect.poll(async () => (await canvasStats(page)).hash, { timeout: 10_000 }).not.toBe(typed.hash);
  expect(await page.evaluate(() => (window as unknown as { events: string[] }).events)).not.toContain(
    'disconnect:false',
  );
  await page.close();
}, 60_000);
