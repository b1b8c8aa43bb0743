/**
 * Writable container files (src/sim/consoles/shell/writable-fs.ts, container-files.ts): layers and mounts, the
 * seeded root copy and chroot, the seeding script, and `>`/`>>`, `touch`, `mkdir`, `rm` in the shell.
 */
import { describe, expect, it } from 'vitest';
import { runInitScript } from '../../../src/sim/consoles/container-files.js';
import type { GuestIdentity } from '../../../src/sim/consoles/guest-identity.js';
import { splitCommandList } from '../../../src/sim/consoles/shell/parse.js';
import { TerminalSession } from '../../../src/sim/consoles/shell/terminal-session.js';
import { FileView, newFileStore } from '../../../src/sim/consoles/shell/writable-fs.js';

const identity = {
  hostname: 'box',
  os: { name: 'Debian GNU/Linux', versionId: '12', id: 'debian', prettyName: 'Debian GNU/Linux 12 (bookworm)' },
  nics: [],
  defaultUser: 'root',
} as unknown as GuestIdentity;
const id = () => identity;

function shell(files?: FileView) {
  let out = '';
  const session = new TerminalSession({
    identity: id,
    tty: false,
    user: 'root',
    cwd: '/',
    write: (t) => (out += t),
    ...(files ? { files } : {}),
  });
  return (script: string) => {
    out = '';
    const status = session.runScript(script);
    return { out, status };
  };
}

describe('redirections', () => {
  it('parses > and >> with their target and refuses a missing one', () => {
    const [item] = splitCommandList('echo hi >> /tmp/x');
    expect(item?.redirect?.append).toBe(true);
    expect(item?.redirect?.target.parts[0]?.text).toBe('/tmp/x');
    expect(() => splitCommandList('echo hi >')).toThrow(/unexpected token `newline'/);
    expect(() => splitCommandList('echo hi | cat')).toThrow(/pipes/);
  });

  it('a VM guest without writable files says read-only', () => {
    const sh = shell();
    expect(sh('echo x > /tmp/f')).toEqual({ out: 'bash: /tmp/f: Read-only file system\n', status: 1 });
    expect(sh('touch /tmp/f').out).toBe("touch: cannot touch '/tmp/f': Read-only file system\n");
  });

  it('writes, appends, lists and removes over the image skeleton', () => {
    const sh = shell(FileView.container(newFileStore(), [], id));
    expect(sh('echo one > /root/f; echo two >> /root/f; cat /root/f').out).toBe('one\ntwo\n');
    expect(sh('mkdir -p /srv/a/b && touch /srv/a/b/c && ls /srv/a/b').out).toBe('c\n');
    expect(sh('cat /etc/hostname').out).toBe('box\n');
    expect(sh('rm /etc/hostname; cat /etc/hostname').out).toBe('cat: /etc/hostname: No such file or directory\n');
    expect(sh('echo x > /nope/f').out).toBe('bash: /nope/f: No such file or directory\n');
    expect(sh('rm /srv/a').out).toBe("rm: cannot remove '/srv/a': Is a directory\n");
    expect(sh('rm -rf /srv/a; ls /srv').out).toBe('');
  });
});

describe('volumes, the seeded root and chroot', () => {
  const seed = [
    '/bin/sh',
    '-c',
    [
      'set -e',
      '[ -e /data/rootfs/.corral-seeded ] && exit 0',
      'rm -rf /data/rootfs',
      'mkdir -p /data/rootfs',
      'tar -C / --one-file-system --exclude=./data -cf - . | tar -C /data/rootfs -xpf -',
      'touch /data/rootfs/.corral-seeded',
    ].join('\n'),
  ];

  it('seeds once: a second run keeps what was written in the copy', () => {
    const volume = newFileStore();
    const view = () => FileView.container(newFileStore(), [{ at: '/data', store: volume }], id);
    runInitScript(view(), seed);
    const inside = view().chroot('/data/rootfs');
    expect(inside.read('/etc/os-release')).toContain('Debian');
    expect(inside.list('/')).toContain('etc');
    inside.write('/root/keep', 'yes\n');
    runInitScript(view(), seed);
    expect(view().chroot('/data/rootfs').read('/root/keep')).toBe('yes\n');
    // The pod's own root never saw it; the volume shows it under the copy.
    expect(view().read('/root/keep')).toBeUndefined();
    expect(view().read('/data/rootfs/root/keep')).toBe('yes\n');
    expect(view().list('/')).toContain('data');
  });
});
