import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCluster } from '../../../src/sim/index.js';
import { TAKEOVER_CLOSE } from '../../../src/sim/consoles/index.js';
import {
  NS,
  plantVmi,
  RfbTestClient,
  setVmiPhase,
  StreamSocket,
  vncPath,
  wsUrl,
  startConsolesCluster,
} from './harness.js';

let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startConsolesCluster();
  plantVmi(cluster, 'web', { ip: '10.244.1.17' });
  plantVmi(cluster, 'typing', { ip: '10.244.1.18' });
  plantVmi(cluster, 'shared', { ip: '10.244.1.19' });
  plantVmi(cluster, 'reboot-me', { ip: '10.244.1.20' });
  plantVmi(cluster, 'stopping', { ip: '10.244.1.21' });
  plantVmi(cluster, 'headless', { devices: { autoattachGraphicsDevice: false } });
  plantVmi(cluster, 'starting', { phase: 'Scheduling' });
});
afterAll(() => cluster.close());

async function openRfb(name: string, encodings?: number[]): Promise<RfbTestClient> {
  const stream = await StreamSocket.open(wsUrl(cluster, vncPath(name)));
  const client = new RfbTestClient(stream);
  await client.handshake(encodings);
  client.requestUpdate(false);
  await client.readUpdate();
  return client;
}

describe('VNC subresource (RFB 3.8)', () => {
  it('echoes plain.kubevirt.io and picks it out of several offered subprotocols', async () => {
    const stream = await StreamSocket.open(wsUrl(cluster, vncPath('web')), ['fantasy.protocol', 'plain.kubevirt.io']);
    expect(stream.ws.protocol).toBe('plain.kubevirt.io');
    expect((await stream.read(12)).toString()).toBe('RFB 003.008\n');
    stream.close();
  });

  it('completes the handshake with the VM name as desktop name and sends a full frame of the text console', async () => {
    const stream = await StreamSocket.open(wsUrl(cluster, vncPath('web')));
    const client = new RfbTestClient(stream);
    await client.handshake();
    expect(client.name).toBe('web');
    expect([client.width, client.height]).toEqual([640, 400]);
    client.requestUpdate(false);
    const update = await client.readUpdate();
    expect(update.rects).toEqual([{ x: 0, y: 0, w: 640, h: 400, encoding: 0 }]);
    expect(update.bytes).toBe(4 + 12 + 640 * 400 * 4);
    const nonBlack = client.fb.filter((p) => p !== 0).length;
    expect(nonBlack).toBeGreaterThan(640 * 16); // at least the status bar plus text
    // The header names the VM and its guest OS; the console shows the getty prompt.
    expect(client.textRow(0)).toContain('web - Fedora Linux 42 (Cloud Edition)');
    expect(client.screenText()).toContain('Kernel 6.14.0-63.fc42.x86_64 on an x86_64 (tty1)');
    expect(client.screenText()).toContain('web login:');
    stream.close();
  });

  it('echoes typed keys as glyphs and sends only the changed cells, nothing while idle', async () => {
    const client = await openRfb('typing');
    const before = client.screenText();
    client.requestUpdate(true);
    // Idle screen: the incremental request is held, no update arrives.
    await new Promise((r) => setTimeout(r, 150));
    expect(client.stream.pending()).toBe(0);
    client.type('root');
    const update = await client.readUpdate();
    expect(update.bytes).toBeLessThan((640 * 400 * 4) / 10);
    for (const r of update.rects) expect(r.h).toBeLessThanOrEqual(16);
    // Keys may arrive over more than one update; keep asking until the whole word is drawn.
    await client.updateUntil((t) => t.includes('typing login: root'));
    expect(client.screenText()).not.toBe(before);
    client.type('\r');
    await client.updateUntil((t) => t.includes('Password:'));
    client.type('secret\r');
    const shell = await client.updateUntil((t) => t.includes('[root@typing ~]#'));
    expect(shell).not.toContain('secret'); // passwords are not echoed
    client.type('hostname\r');
    await client.updateUntil((t) => /hostname\ntyping\n/.test(t));
    client.stream.close();
  });

  it('a second connection kicks the first with a normal close naming the takeover', async () => {
    const first = await openRfb('shared');
    const second = await openRfb('shared');
    const closed = await first.stream.waitClosed();
    expect(closed).toEqual({ code: TAKEOVER_CLOSE.code, reason: TAKEOVER_CLOSE.reason });
    // The newcomer keeps working.
    second.type('x');
    second.requestUpdate(true);
    await second.readUpdate();
    expect(second.stream.closed).toBeUndefined();
    second.stream.close();
  });

  it('preserveSession=true refuses with 503 while a session is active', async () => {
    const holder = await openRfb('web');
    const refused = await StreamSocket.open(wsUrl(cluster, vncPath('web', '?preserveSession=true'))).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      status: 503,
      body: { reason: 'ServiceUnavailable', message: 'Active VNC connection. Request denied.' },
    });
    expect(holder.stream.closed).toBeUndefined();
    holder.stream.close();
  });

  it('Ctrl-Alt-Del reboots the guest: the screen clears, shows boot messages, then a login prompt again', async () => {
    const client = await openRfb('reboot-me');
    client.type('someone');
    await client.updateUntil((t) => t.includes('reboot-me login: someone'));
    client.key(0xffe3, true); // Control_L
    client.key(0xffe9, true); // Alt_L
    client.key(0xffff, true); // Delete
    client.key(0xffff, false);
    client.key(0xffe9, false);
    client.key(0xffe3, false);
    // How much of the boot log is still on screen depends on how fast the client polls; its end always is.
    const rebooted = await client.updateUntil(
      (t) => t.includes('Reached target multi-user.target') && t.includes('reboot-me login:'),
    );
    expect(rebooted).not.toContain('someone'); // the screen was cleared
    expect(rebooted).toContain('[  OK  ]');
    client.stream.close();
  });

  it('scrolling is sent as one CopyRect plus the new line when the client supports CopyRect', async () => {
    const client = await openRfb('web', [1, 0]);
    client.type('\r'.repeat(30));
    let sawCopy = false;
    for (let i = 0; i < 50 && !sawCopy; i++) {
      client.requestUpdate(true);
      const update = await client.readUpdate();
      sawCopy = update.rects.some((r) => r.encoding === 1);
    }
    expect(sawCopy).toBe(true);
    // After all copies and repaints the decoded screen matches a fresh full frame.
    await new Promise((r) => setTimeout(r, 100));
    while (client.stream.pending() === 0) {
      client.requestUpdate(true);
      const got = await Promise.race([
        client.readUpdate().then(() => true),
        new Promise((r) => setTimeout(() => r(false), 100)),
      ]);
      if (!got) break;
    }
    const incremental = client.screenText();
    client.requestUpdate(false);
    await client.readUpdate();
    expect(client.screenText()).toBe(incremental);
    client.stream.close();
  });

  it('closes the session when the VMI stops', async () => {
    const client = await openRfb('stopping');
    setVmiPhase(cluster, 'stopping', 'Succeeded');
    const closed = await client.stream.waitClosed();
    expect(closed.code).toBe(1000);
    expect(closed.reason).toBe('VMI is not running');
  });

  it('refuses before upgrading: 404 for a missing VMI, 400 when not running or without graphics', async () => {
    await expect(StreamSocket.open(wsUrl(cluster, vncPath('nope')))).rejects.toMatchObject({
      status: 404,
      body: {
        kind: 'Status',
        reason: 'NotFound',
        message: 'virtualmachineinstance.kubevirt.io "nope" not found',
        code: 404,
      },
    });
    await expect(StreamSocket.open(wsUrl(cluster, vncPath('starting')))).rejects.toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: 'VMI is not running' },
    });
    await expect(StreamSocket.open(wsUrl(cluster, vncPath('headless')))).rejects.toMatchObject({
      status: 400,
      body: { message: 'No graphics devices are present.' },
    });
  });

  it('serves vnc/screenshot as a PNG of the screen', async () => {
    const res = await fetch(`${cluster.url}${vncPath('web')}/screenshot`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(640);
    expect(png.readUInt32BE(20)).toBe(400);
    const missing = await fetch(
      `${cluster.url}/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/nope/vnc/screenshot`,
    );
    expect(missing.status).toBe(404);
  });
});
