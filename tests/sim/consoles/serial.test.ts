import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCluster } from '../../../src/sim/index.js';
import { MIGRATED_CLOSE, VMI_STOPPED_CLOSE } from '../../../src/sim/consoles/index.js';
import { consolePath, NS, plantVmi, setVmiPhase, StreamSocket, VMIS, wsUrl, startConsolesCluster } from './harness.js';

let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startConsolesCluster(20);
  plantVmi(cluster, 'web', { ip: '10.244.1.17' });
  plantVmi(cluster, 'db', { ip: '10.244.3.4' });
  plantVmi(cluster, 'keep', { ip: '10.244.3.5' });
  plantVmi(cluster, 'editor', { ip: '10.244.3.7' });
  plantVmi(cluster, 'frozen', { ip: '10.244.3.8' });
  plantVmi(cluster, 'mover', { ip: '10.244.3.9' });
  plantVmi(cluster, 'gone', { ip: '10.244.3.6' });
  plantVmi(cluster, 'noserial', { devices: { autoattachSerialConsole: false } });
  plantVmi(cluster, 'broken', { phase: 'Failed' });
  plantVmi(cluster, 'stopped', { phase: 'Succeeded' });
});
afterAll(() => cluster.close());

const PROMPT = /\[[\w-]+@[\w-]+ [^\]]*\][$#] $/;

async function login(name: string, user = 'fedora'): Promise<StreamSocket> {
  const tty = await StreamSocket.open(wsUrl(cluster, consolePath(name)));
  await tty.readUntil(`${name} login: `);
  tty.send(`${user}\r`);
  await tty.readUntil('Password: ');
  tty.send('anything\r');
  await tty.readUntil(PROMPT);
  return tty;
}

/** Type a command line; returns the echo and output up to (not including) the next prompt. */
async function run(tty: StreamSocket, line: string): Promise<string> {
  tty.send(`${line}\r`);
  return (await tty.readUntil(PROMPT)).replace(PROMPT, '');
}

describe('serial console subresource', () => {
  it('is a raw byte stream under plain.kubevirt.io that shows the login prompt on connect', async () => {
    const tty = await StreamSocket.open(wsUrl(cluster, consolePath('web')));
    expect(tty.ws.protocol).toBe('plain.kubevirt.io');
    const greeting = await tty.readUntil('web login: ');
    expect(greeting.startsWith('\r\n')).toBe(true);
    tty.close();
  });

  it('logs any user in and answers hostname, whoami, uname, echo, ls, uptime like the VM would', async () => {
    const tty = await login('web');
    expect(await run(tty, 'hostname')).toBe('hostname\r\nweb\r\n');
    expect(await run(tty, 'whoami')).toBe('whoami\r\nfedora\r\n');
    expect(await run(tty, 'uname -a')).toBe(
      'uname -a\r\nLinux web 6.14.0-63.fc42.x86_64 #1 SMP PREEMPT_DYNAMIC Mon Mar 24 19:53:37 UTC 2025 x86_64 GNU/Linux\r\n',
    );
    expect(await run(tty, `echo "hello  $HOSTNAME" 'and $USER'`)).toBe(
      `echo "hello  $HOSTNAME" 'and $USER'\r\nhello  web and $USER\r\n`,
    );
    expect(await run(tty, 'ls -a')).toBe('ls -a\r\n.  ..  .bash_logout  .bash_profile  .bashrc\r\n');
    expect(await run(tty, 'cd /etc && ls')).toContain('os-release');
    expect(await run(tty, 'cat hostname')).toBe('cat hostname\r\nweb\r\n');
    expect(await run(tty, 'uptime')).toMatch(/^uptime\r\n \d\d:\d\d:\d\d up {1,2}1:00, {2}1 user, {2}load average: /);
    expect(await run(tty, 'frobnicate --now')).toBe('frobnicate --now\r\nbash: frobnicate: command not found\r\n');
    expect(await run(tty, 'echo $?')).toBe('echo $?\r\n127\r\n');
    tty.close();
  });

  it('ip addr shows the IP from the VMI status', async () => {
    const tty = await login('db');
    const out = await run(tty, 'ip addr');
    expect(out).toContain('2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP>');
    expect(out).toContain('inet 10.244.3.4/24 brd 10.244.3.255 scope global dynamic noprefixroute eth0');
    expect(out).toContain('link/ether 52:54:00:3a:7b:01');
    expect(await run(tty, 'ip -br a')).toMatch(/eth0 +UP +10\.244\.3\.4\/24/);
    tty.close();
  });

  it('edits the line like a tty: backspace erases, Ctrl-C abandons, CR LF counts once', async () => {
    const tty = await login('editor', 'root');
    tty.send('hostnamx\x7fe\r');
    const out = await tty.readUntil(PROMPT);
    expect(out).toBe('hostnamx\b \be\r\neditor\r\n[root@editor ~]# ');
    tty.send('sleep 100\x03');
    expect(await tty.readUntil(PROMPT)).toBe('sleep 100^C\r\n[root@editor ~]# ');
    tty.send('whoami\r\n');
    expect(await tty.readUntil(PROMPT)).toBe('whoami\r\nroot\r\n[root@editor ~]# ');
    tty.send('\x1b[A'); // arrow keys are swallowed, not echoed as garbage
    tty.send('exit\r');
    expect(await tty.readUntil('editor login: ')).toBe(
      'exit\r\nlogout\r\n\r\nFedora Linux 42 (Cloud Edition)\r\nKernel 6.14.0-63.fc42.x86_64 on an x86_64 (ttyS0)\r\n\r\neditor login: ',
    );
    tty.close();
  });

  it('keeps the session across reconnects like a real serial port, and a new connection kicks the old one', async () => {
    const first = await login('keep');
    await run(first, 'cd /tmp');
    const second = await StreamSocket.open(wsUrl(cluster, consolePath('keep')));
    expect((await first.waitClosed()).code).toBe(1000);
    // Nothing is replayed; the current prompt is redrawn and the shell is the same one (still in /tmp).
    expect(await second.readUntil(PROMPT)).toBe('\r\n[fedora@keep tmp]$ ');
    expect(await run(second, 'pwd')).toBe('pwd\r\n/tmp\r\n');
    second.close();
  });

  it('streams the boot log to a console attached while the VMI starts, then the getty banner', async () => {
    plantVmi(cluster, 'fresh', { ip: '10.244.9.9', phase: 'Scheduled' });
    setVmiPhase(cluster, 'fresh', 'Running');
    const tty = await StreamSocket.open(wsUrl(cluster, consolePath('fresh')));
    const log = await tty.readUntil('fresh login: ', 10_000);
    // Lines printed before the socket attached are gone (a serial port has no scrollback); the later ones arrive.
    expect(log).toContain('Reached target multi-user.target');
    expect(log).toContain('Cloud-init v. 24.4 finished');
    expect(log).toContain(
      '\r\nFedora Linux 42 (Cloud Edition)\r\nKernel 6.14.0-63.fc42.x86_64 on an x86_64 (ttyS0)\r\n\r\nfresh login: ',
    );
    tty.close();
  });

  it('a paused VMI does not answer; what was typed is processed on unpause', async () => {
    const tty = await login('frozen');
    const setPaused = (paused: boolean) =>
      cluster.store.mutate(VMIS, NS, 'frozen', (v) => {
        (v.status as { conditions?: unknown[] }).conditions = paused
          ? [{ type: 'Paused', status: 'True', reason: 'PausedByUser' }]
          : [];
      });
    setPaused(true);
    tty.send('hostname\r');
    await new Promise((r) => setTimeout(r, 150));
    expect(tty.pending()).toBe(0);
    setPaused(false);
    expect(await tty.readUntil(PROMPT)).toBe('hostname\r\nfrozen\r\n[fedora@frozen ~]$ ');
    tty.close();
  });

  it('a migration ends the console stream; reconnecting finds the same running shell', async () => {
    const tty = await login('mover');
    await run(tty, 'cd /var');
    cluster.store.mutate(VMIS, NS, 'mover', (v) => {
      (v.status as { nodeName: string }).nodeName = 'node-2';
    });
    expect(await tty.waitClosed()).toEqual({ code: MIGRATED_CLOSE.code, reason: MIGRATED_CLOSE.reason });
    const again = await StreamSocket.open(wsUrl(cluster, consolePath('mover')));
    expect(await again.readUntil(PROMPT)).toBe('\r\n[fedora@mover var]$ ');
    again.close();
  });

  it('closes the console when the VMI stops', async () => {
    const tty = await login('gone');
    setVmiPhase(cluster, 'gone', 'Succeeded');
    expect(await tty.waitClosed()).toEqual({ code: VMI_STOPPED_CLOSE.code, reason: VMI_STOPPED_CLOSE.reason });
  });

  it('refuses before upgrading with virt-api errors', async () => {
    await expect(StreamSocket.open(wsUrl(cluster, consolePath('stopped')))).rejects.toMatchObject({
      status: 400,
      body: { kind: 'Status', status: 'Failure', reason: 'BadRequest', message: 'VMI is not running', code: 400 },
    });
    await expect(StreamSocket.open(wsUrl(cluster, consolePath('broken')))).rejects.toMatchObject({
      status: 409,
      body: {
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "broken": VMI is in failed status',
      },
    });
    await expect(StreamSocket.open(wsUrl(cluster, consolePath('noserial')))).rejects.toMatchObject({
      status: 400,
      body: { message: 'No serial consoles are present.' },
    });
    await expect(StreamSocket.open(wsUrl(cluster, consolePath('absent')))).rejects.toMatchObject({
      status: 404,
      body: { reason: 'NotFound' },
    });
    // A malformed escape in the path is a plain 404, not an exception in the upgrade handler.
    await expect(StreamSocket.open(wsUrl(cluster, consolePath('%zz')))).rejects.toMatchObject({ status: 404 });
  });
});
