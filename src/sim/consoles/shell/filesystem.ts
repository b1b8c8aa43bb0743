/**
 * A read-only skeleton of a Linux root filesystem: enough for `ls`, `cd` and `cat` of the files people actually
 * look at on a fresh machine (/etc/hostname, /etc/os-release, /etc/hosts). Home directories are empty but for
 * the shell dotfiles, as on a fresh cloud image.
 */
import type { GuestIdentity } from '../guest-identity.js';

const DIRECTORIES: Record<string, string[]> = {
  '/': [
    'bin',
    'boot',
    'dev',
    'etc',
    'home',
    'lib',
    'lib64',
    'media',
    'mnt',
    'opt',
    'proc',
    'root',
    'run',
    'sbin',
    'srv',
    'sys',
    'tmp',
    'usr',
    'var',
  ],
  '/etc': ['fstab', 'hostname', 'hosts', 'os-release', 'passwd', 'resolv.conf'],
  '/root': ['.bash_profile', '.bashrc'],
  '/usr': ['bin', 'lib', 'lib64', 'local', 'sbin', 'share'],
  '/var': ['cache', 'lib', 'log', 'tmp'],
};
const EMPTY_DIRS = [
  '/bin',
  '/boot',
  '/dev',
  '/lib',
  '/lib64',
  '/media',
  '/mnt',
  '/opt',
  '/proc',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/tmp',
];

/** Absolute, normalised form of `path` seen from `cwd` (`~` is the user's home). */
export function resolvePath(cwd: string, path: string, home: string): string {
  const expanded = path === '~' ? home : path.startsWith('~/') ? home + path.slice(1) : path;
  const parts = (expanded.startsWith('/') ? expanded : `${cwd}/${expanded}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return `/${out.join('/')}`;
}

/** `sshHome`: the home directory cloud-init wrote an authorized_keys file into (sshHomeOf). */
export function isDirectory(path: string, user: string, sshHome?: string): boolean {
  return (
    path in DIRECTORIES ||
    EMPTY_DIRS.includes(path) ||
    path.startsWith('/usr/') ||
    path === '/home' ||
    path === `/home/${user}` ||
    (sshHome !== undefined && path === `${sshHome}/.ssh`) ||
    (path.startsWith('/var/') && path.split('/').length === 3)
  );
}

export function childrenOf(path: string, user: string, sshHome?: string): string[] {
  if (sshHome !== undefined && path === `${sshHome}/.ssh`) return ['authorized_keys'];
  const base =
    path === '/home'
      ? user === 'root'
        ? []
        : [user]
      : path === `/home/${user}`
        ? ['.bash_logout', '.bash_profile', '.bashrc']
        : (DIRECTORIES[path] ?? []);
  return path === sshHome ? [...base, '.ssh'] : base;
}

/** The home directory holding `.ssh/authorized_keys` when cloud-init wrote keys, else undefined. */
export function sshHomeOf(id: GuestIdentity): string | undefined {
  if (!id.sshKeys?.length) return undefined;
  return id.defaultUser === 'root' ? '/root' : `/home/${id.defaultUser}`;
}

/** File text for the few files that exist, else undefined. */
export function fileContent(path: string, id: GuestIdentity): string | undefined {
  const os = id.os;
  switch (path) {
    case '/etc/hostname':
      return `${id.hostname}\n`;
    case '/etc/os-release':
      return `NAME="${os.name}"\nVERSION_ID="${os.versionId}"\nID=${os.id}\nPRETTY_NAME="${os.prettyName}"\n`;
    case '/etc/hosts': {
      const ip = id.nics[0]?.ips.find((a) => !a.includes(':'));
      return `127.0.0.1   localhost localhost.localdomain\n::1         localhost localhost.localdomain\n${ip ? `${ip}  ${id.hostname}\n` : ''}`;
    }
    case '/etc/resolv.conf':
      return 'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n';
    case '/etc/fstab':
      return 'UUID=3c1f1d9e-8f52-4d0e-9a43-2f0b1c9d7e21 / ext4 defaults 0 1\n';
    case '/etc/passwd':
      return `root:x:0:0:root:/root:/bin/bash\n${id.defaultUser !== 'root' ? `${id.defaultUser}:x:1000:1000::/home/${id.defaultUser}:/bin/bash\n` : ''}`;
    default: {
      // cloud-init's ssh_authorized_keys land with the user it created.
      const home = sshHomeOf(id);
      if (home && path === `${home}/.ssh/authorized_keys`) return (id.sshKeys ?? []).map((k) => `${k}\n`).join('');
      return undefined;
    }
  }
}
