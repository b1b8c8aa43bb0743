/**
 * The handful of commands the simulated guests understand, as pure functions of the guest's identity and the
 * shell's state: `hostname`, `uname`, `whoami`, `id`, `echo`, `ls`, `cd`, `pwd`, `cat`, `ip addr`, `uptime`,
 * `free`, `date`, `true`/`false`, `clear`, `exit`/`logout`, `reboot`, `sudo`, and over a container's writable
 * files (`ShellState.files`) `touch`, `mkdir [-p]`, `rm [-rf]` (a VM guest's skeleton answers "Read-only file
 * system"). Anything else is
 * `<shell>: <cmd>: command not found` with exit status 127, as bash and dash print it.
 */
import type { GuestIdentity } from '../guest-identity.js';
import { childrenOf, fileContent, isDirectory, resolvePath, sshHomeOf } from './filesystem.js';
import type { FileView } from './writable-fs.js';

export interface ShellState {
  user: string;
  cwd: string;
  /** Exit status of the last command, for `$?`. */
  lastStatus: number;
  shellName: 'bash' | 'sh';
  /** Writable files (container shells); absent: the read-only skeleton of a VM guest. */
  files?: FileView;
}

export interface CommandResult {
  stdout: string;
  stderr: string;
  status: number;
  /** Side effects the session (not the command) carries out. */
  action?: 'exit' | 'reboot' | 'poweroff' | 'clear';
}

type Command = (args: string[], id: GuestIdentity, state: ShellState) => CommandResult;

const ok = (stdout = ''): CommandResult => ({ stdout, stderr: '', status: 0 });
const fail = (stderr: string, status = 1): CommandResult => ({ stdout: '', stderr, status });

const readFile = (path: string, id: GuestIdentity, s: ShellState) =>
  s.files ? s.files.read(path) : fileContent(path, id);
const isDir = (path: string, s: ShellState, id: GuestIdentity) =>
  s.files ? s.files.isDir(path) : isDirectory(path, s.user, sshHomeOf(id));
const listDir = (path: string, s: ShellState, id: GuestIdentity) =>
  s.files ? s.files.list(path) : childrenOf(path, s.user, sshHomeOf(id));
const READ_ONLY = 'Read-only file system';

/** `touch`, `mkdir [-p]`, `rm [-rf]` over the writable view (a read-only guest refuses them). */
function fileCommand(
  name: 'touch' | 'mkdir' | 'rm',
  args: string[],
  s: ShellState,
  op: (files: FileView, path: string, flags: string) => string | undefined,
): CommandResult {
  const flags = args.filter((a) => a.startsWith('-')).join('');
  const paths = args.filter((a) => !a.startsWith('-'));
  if (paths.length === 0) return fail(`${name}: missing operand\n`);
  let stderr = '';
  for (const arg of paths) {
    const why = s.files ? op(s.files, resolvePath(s.cwd, arg, homeOf(s.user)), flags) : READ_ONLY;
    const verb = name === 'touch' ? 'cannot touch' : name === 'mkdir' ? 'cannot create directory' : 'cannot remove';
    if (why) stderr += `${name}: ${verb} '${arg}': ${why}\n`;
  }
  return { stdout: '', stderr, status: stderr ? 1 : 0 };
}

export function homeOf(user: string): string {
  return user === 'root' ? '/root' : `/home/${user}`;
}

const COMMANDS: Record<string, Command> = {
  hostname: (_a, id) => ok(`${id.hostname}\n`),
  whoami: (_a, _id, s) => ok(`${s.user}\n`),
  id: (_a, _id, s) => {
    if (s.user === 'root') return ok('uid=0(root) gid=0(root) groups=0(root)\n');
    return ok(`uid=1000(${s.user}) gid=1000(${s.user}) groups=1000(${s.user}),10(wheel)\n`);
  },
  echo: (args) => {
    const noNewline = args[0] === '-n';
    const text = (noNewline ? args.slice(1) : args).join(' ');
    return ok(noNewline ? text : `${text}\n`);
  },
  pwd: (_a, _id, s) => ok(`${s.cwd}\n`),
  cd: (args, id, s) => {
    const target = resolvePath(s.cwd, args[0] ?? homeOf(s.user), homeOf(s.user));
    if (!isDir(target, s, id)) {
      const why = readFile(target, id, s) !== undefined ? 'Not a directory' : 'No such file or directory';
      return fail(`${s.shellName}: cd: ${args[0]}: ${why}\n`);
    }
    s.cwd = target;
    return ok();
  },
  ls: (args, id, s) => {
    const showHidden = args.some((a) => /^-[a-zA-Z]*a/.test(a));
    const paths = args.filter((a) => !a.startsWith('-'));
    const targets = paths.length ? paths : ['.'];
    let stdout = '';
    let stderr = '';
    let status = 0;
    for (const arg of targets) {
      const path = resolvePath(s.cwd, arg, homeOf(s.user));
      if (isDir(path, s, id)) {
        const names = listDir(path, s, id).filter((n) => showHidden || !n.startsWith('.'));
        const listing = (showHidden ? ['.', '..', ...names] : names).join('  ');
        if (targets.length > 1) stdout += `${arg}:\n`;
        if (listing) stdout += `${listing}\n`;
      } else if (readFile(path, id, s) !== undefined) {
        stdout += `${arg}\n`;
      } else {
        stderr += `ls: cannot access '${arg}': No such file or directory\n`;
        status = 2;
      }
    }
    return { stdout, stderr, status };
  },
  cat: (args, id, s) => {
    let stdout = '';
    let stderr = '';
    for (const arg of args) {
      const path = resolvePath(s.cwd, arg, homeOf(s.user));
      const content = readFile(path, id, s);
      if (content !== undefined) stdout += content;
      else stderr += `cat: ${arg}: ${isDir(path, s, id) ? 'Is a directory' : 'No such file or directory'}\n`;
    }
    return { stdout, stderr, status: stderr ? 1 : 0 };
  },
  touch: (args, _id, s) => fileCommand('touch', args, s, (f, path) => (f.exists(path) ? undefined : f.write(path, ''))),
  mkdir: (args, _id, s) =>
    fileCommand('mkdir', args, s, (f, path, flags) => {
      if (!flags.includes('p')) return f.mkdir(path);
      let at = '';
      for (const part of path.split('/').filter(Boolean)) {
        at += `/${part}`;
        if (f.isDir(at)) continue;
        const why = f.mkdir(at);
        if (why) return why;
      }
      return undefined;
    }),
  rm: (args, _id, s) =>
    fileCommand('rm', args, s, (f, path, flags) => {
      if (flags.includes('f') && !f.exists(path)) return undefined;
      return f.remove(path, /[rR]/.test(flags));
    }),
  uname: (args, id) => {
    const flags = new Set(args.join('').replace(/-/g, '').split(''));
    const all = flags.has('a');
    const fields: string[] = [];
    if (all || flags.has('s') || flags.size === 0) fields.push('Linux');
    if (all || flags.has('n')) fields.push(id.hostname);
    if (all || flags.has('r')) fields.push(id.os.kernelRelease);
    if (all || flags.has('v')) fields.push(id.os.kernelVersion);
    if (all || flags.has('m')) fields.push('x86_64');
    if (all || flags.has('o')) fields.push('GNU/Linux');
    return ok(`${fields.join(' ')}\n`);
  },
  ip: (args, id) => {
    const brief = args.includes('-br') || args.includes('-brief');
    const objects = args.filter((a) => !a.startsWith('-'));
    const object = objects[0] ?? '';
    if (!['a', 'addr', 'address'].includes(object)) {
      return fail(
        object
          ? `Object "${object}" is unknown, try "ip help".\n`
          : 'Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n',
        object ? 1 : 255,
      );
    }
    return ok(brief ? ipBrief(id) : ipAddr(id));
  },
  uptime: (_a, id) => ok(`${uptimeLine(id)}\n`),
  free: (args, id) => {
    const mib = id.memoryMiB;
    const used = Math.round(mib * 0.11);
    const cache = Math.round(mib * 0.14);
    const unit = args.includes('-g') ? 1024 : args.includes('-m') ? 1 : 1 / 1024;
    const f = (v: number) => String(Math.round(v / unit)).padStart(12);
    return ok(
      `               total        used        free      shared  buff/cache   available\n` +
        `Mem:    ${f(mib)}${f(used)}${f(mib - used - cache)}${f(1)}${f(cache)}${f(mib - used)}\n` +
        `Swap:   ${f(0)}${f(0)}${f(0)}\n`,
    );
  },
  date: () => ok(`${formatDate(new Date())}\n`),
  true: () => ok(),
  false: () => fail('', 1),
  clear: () => ({ ...ok('\x1b[H\x1b[2J'), action: 'clear' }),
  exit: (args) => {
    const code = args[0] === undefined ? undefined : Number.parseInt(args[0], 10);
    return {
      stdout: '',
      stderr: '',
      status: code !== undefined && Number.isFinite(code) ? code & 0xff : 0,
      action: 'exit',
    };
  },
  reboot: (_a, _id, s) => {
    if (s.user !== 'root') return fail('Call to Reboot failed: Access denied\n');
    return { ...ok(), action: 'reboot' };
  },
  poweroff: (_a, _id, s) => {
    if (s.user !== 'root') return fail('Call to PowerOff failed: Access denied\n');
    return { ...ok(), action: 'poweroff' };
  },
};
COMMANDS.logout = COMMANDS.exit!;
COMMANDS.halt = COMMANDS.poweroff!;

/** A program this simulated machine has (what exec'ing it directly, without a shell, can find). */
export function isKnownCommand(name: string): boolean {
  return name === 'sudo' || Object.hasOwn(COMMANDS, name);
}

/** Run one command (argv already expanded). `sudo` re-runs the rest as root, like a NOPASSWD cloud user. */
export function runCommand(argv: string[], id: GuestIdentity, state: ShellState): CommandResult {
  const [name, ...args] = argv;
  if (name === undefined) return ok();
  if (name === 'sudo') {
    if (args.length === 0) return fail('usage: sudo command\n');
    const previous = state.user;
    state.user = 'root';
    try {
      return runCommand(args, id, state);
    } finally {
      state.user = previous;
    }
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) return fail(`${state.shellName}: ${name}: command not found\n`, 127);
  return command(args, id, state);
}

function ipAddr(id: GuestIdentity): string {
  let out =
    '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n' +
    '    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n' +
    '    inet 127.0.0.1/8 scope host lo\n' +
    '       valid_lft forever preferred_lft forever\n' +
    '    inet6 ::1/128 scope host noprefixroute\n' +
    '       valid_lft forever preferred_lft forever\n';
  id.nics.forEach((nic, i) => {
    out +=
      `${i + 2}: ${nic.name}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1400 qdisc fq_codel state UP group default qlen 1000\n` +
      `    link/ether ${nic.mac} brd ff:ff:ff:ff:ff:ff\n`;
    for (const ip of nic.ips) {
      const v6 = ip.includes(':');
      out += v6
        ? `    inet6 ${ip}/64 scope global dynamic noprefixroute\n`
        : `    inet ${ip}/24 brd ${ip.replace(/\.\d+$/, '.255')} scope global dynamic noprefixroute ${nic.name}\n`;
      out += '       valid_lft 86313sec preferred_lft 86313sec\n';
    }
  });
  return out;
}

function ipBrief(id: GuestIdentity): string {
  const line = (name: string, state: string, addrs: string[]) =>
    `${name.padEnd(17)}${state.padEnd(15)}${addrs.join(' ')} \n`;
  return (
    line('lo', 'UNKNOWN', ['127.0.0.1/8', '::1/128']) +
    id.nics
      .map((n) =>
        line(
          n.name,
          'UP',
          n.ips.map((ip) => `${ip}/${ip.includes(':') ? 64 : 24}`),
        ),
      )
      .join('')
  );
}

function uptimeLine(id: GuestIdentity): string {
  const now = new Date();
  const minutes = Math.max(0, Math.floor((now.getTime() - id.bootedAt) / 60_000));
  const days = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const clock = h > 0 ? `${String(h).padStart(2)}:${String(m).padStart(2, '0')}` : `${m} min`;
  const up = days > 0 ? `${days} day${days > 1 ? 's' : ''}, ${clock}` : clock;
  const time = now.toISOString().slice(11, 19);
  return ` ${time} up ${up},  1 user,  load average: 0.08, 0.03, 0.01`;
}

function formatDate(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${d.toISOString().slice(11, 19)} UTC ${d.getUTCFullYear()}`;
}
