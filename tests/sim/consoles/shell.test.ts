/** The shell grammar, command set and tty line discipline on their own (no sockets). */
import { describe, expect, it } from 'vitest';
import type { GuestIdentity } from '../../../src/sim/consoles/guest-identity.js';
import { expandWords, splitCommandList } from '../../../src/sim/consoles/shell/parse.js';
import { TerminalSession } from '../../../src/sim/consoles/shell/terminal-session.js';
import { TextScreen } from '../../../src/sim/consoles/text-screen.js';

const identity: GuestIdentity = {
  hostname: 'box',
  os: {
    id: 'debian',
    name: 'Debian GNU/Linux',
    prettyName: 'Debian GNU/Linux 12 (bookworm)',
    versionId: '12',
    kernelRelease: '6.1.0-32-cloud-amd64',
    kernelVersion: '#1 SMP',
  },
  defaultUser: 'debian',
  nics: [{ name: 'eth0', mac: '52:54:00:00:00:01', ips: ['10.0.0.5', 'fd00::5'] }],
  memoryMiB: 2048,
  bootedAt: Date.now() - 3 * 86_400_000 - 65 * 60_000,
};

function pipeShell(shellName: 'sh' | 'bash' = 'sh') {
  const out: string[] = [];
  const err: string[] = [];
  let exit: number | undefined;
  const session = new TerminalSession({
    identity: () => identity,
    tty: false,
    shellName,
    cwd: '/',
    write: (text, stream) => (stream === 'stderr' ? err : out).push(text),
    onExit: (status) => (exit = status),
  });
  return { session, out: () => out.join(''), err: () => err.join(''), exit: () => exit };
}

describe('shell grammar', () => {
  it('splits ;, && and || lists and honours quotes and escapes', () => {
    const items = splitCommandList(`echo 'a;b' && false || echo "x \\"y\\"" ; echo a\\ b # comment`);
    expect(items.map((i) => i.when)).toEqual(['always', 'and', 'or', 'always']);
    expect(expandWords(items[0]!.words, {})).toEqual(['echo', 'a;b']);
    expect(expandWords(items[2]!.words, {})).toEqual(['echo', 'x "y"']);
    expect(expandWords(items[3]!.words, {})).toEqual(['echo', 'a b']);
  });

  it('expands $VAR and ${VAR} outside single quotes only', () => {
    const [item] = splitCommandList(`echo $HOME "\${USER}!" '$HOME'`);
    expect(expandWords(item!.words, { HOME: '/root', USER: 'root' })).toEqual(['echo', '/root', 'root!', '$HOME']);
  });

  it('refuses pipes and redirections with a clear message instead of misreading them', () => {
    expect(() => splitCommandList('ls | grep x')).toThrow(/pipes, redirections/);
    expect(() => splitCommandList("echo 'unterminated")).toThrow(/unexpected EOF/);
    expect(() => splitCommandList('&& ls')).toThrow(/syntax error/);
  });
});

describe('shell commands', () => {
  it('runs scripts with exit statuses, && / || and $?', () => {
    const sh = pipeShell();
    expect(sh.session.runScript('false || echo recovered; nosuch; echo $?; cat /etc/hostname /nope')).toBe(1);
    expect(sh.out()).toBe('recovered\n127\nbox\n');
    expect(sh.err()).toBe('sh: nosuch: command not found\ncat: /nope: No such file or directory\n');
  });

  it('answers uptime with days, ip -br a with every address, and free from the memory size', () => {
    const sh = pipeShell();
    sh.session.runScript('uptime; ip -br a; free -m');
    const [uptime, lo, eth0, , mem] = sh.out().split('\n');
    expect(uptime).toMatch(/ up 3 days, {2}1:05, {2}1 user,/);
    expect(lo).toMatch(/^lo +UNKNOWN +127\.0\.0\.1\/8 ::1\/128 $/);
    expect(eth0).toMatch(/^eth0 +UP +10\.0\.0\.5\/24 fd00::5\/64 $/);
    expect(mem).toMatch(/^Mem: +2048 /);
  });

  it('cd changes the prompt directory and refuses missing paths', () => {
    const sh = pipeShell('bash');
    sh.session.runScript('cd /var/log && pwd; cd /nowhere');
    expect(sh.out()).toBe('/var/log\n');
    expect(sh.err()).toBe('bash: cd: /nowhere: No such file or directory\n');
  });

  it('without a tty reads lines without echo and exits at end of input with the last status', () => {
    const sh = pipeShell();
    sh.session.input('hostname\nfalse');
    expect(sh.out()).toBe('box\n');
    sh.session.endOfInput();
    expect(sh.exit()).toBe(1);
  });

  it('reboot needs root; a non-root user is denied like systemctl', () => {
    const rebooted: string[] = [];
    const session = new TerminalSession({
      identity: () => identity,
      tty: false,
      user: 'debian',
      write: (t) => rebooted.push(t),
      onReboot: () => rebooted.push('REBOOT'),
    });
    session.runScript('reboot');
    expect(rebooted).toEqual(['Call to Reboot failed: Access denied\n']);
    session.runScript('sudo reboot');
    expect(rebooted).toContain('REBOOT');
  });
});

describe('getty per distribution', () => {
  it('Debian and Ubuntu print their /etc/issue line and a user@host:~$ prompt', () => {
    let out = '';
    const session = new TerminalSession({
      identity: () => identity,
      tty: true,
      loginTty: 'ttyS0',
      write: (t) => (out += t),
    });
    session.showLogin();
    expect(out).toBe('\r\nDebian GNU/Linux 12 (bookworm) box ttyS0\r\n\r\nbox login: ');
    session.input('debian\rpw\r');
    expect(out.endsWith('debian@box:~$ ')).toBe(true);
    session.input('cd /etc\r');
    expect(out.endsWith('debian@box:/etc$ ')).toBe(true);
  });
});

describe('power commands in a container', () => {
  it('has no init system to ask, like systemctl inside a pod', () => {
    const sh = pipeShell();
    expect(sh.session.runScript('reboot')).toBe(1);
    expect(sh.err()).toBe(
      "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n",
    );
  });
});

describe('TextScreen', () => {
  it('wraps, scrolls below the status bar and reports the scroll to listeners', () => {
    const screen = new TextScreen();
    screen.setStatus('left', 'right');
    const scrolls: number[] = [];
    screen.listen({ damage: () => undefined, scroll: (n) => scrolls.push(n) });
    for (let i = 0; i < 30; i++) screen.write(`line ${i}\r\n`);
    expect(scrolls.length).toBe(30 - 23);
    expect(screen.rowText(0)).toMatch(/^ left +right$/);
    expect(screen.rowText(1)).toBe('line 7');
    expect(screen.rowText(23)).toBe('line 29');
    screen.write('x'.repeat(85));
    expect(screen.rowText(23)).toBe('x'.repeat(80));
    expect(screen.rowText(24)).toBe('xxxxx');
  });

  it('applies SGR colours and clears with ESC[2J', () => {
    const screen = new TextScreen();
    screen.write('\x1b[1;32mOK\x1b[0m!');
    expect(screen.attrs[80]).toBe(0x0a); // bright green on black
    expect(screen.attrs[82]).toBe(0x07);
    screen.write('\x1b[H\x1b[2J');
    expect(screen.rowText(1)).toBe('');
    expect([screen.cursorRow, screen.cursorCol]).toEqual([1, 0]);
  });
});
