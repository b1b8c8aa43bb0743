/**
 * One terminal on a simulated machine: a getty-style login (any user and password, unless cloud-init set a password:
 * then only its user with that password) followed by a shell, or a
 * shell straight away (pod exec). Implements what the guest's tty line discipline does on a real serial line:
 * echo of typed characters, `\r` → `\r\n`, backspace as `\b \b`, Ctrl-C (`^C`), Ctrl-U, Ctrl-D, and swallowing
 * of ANSI escape sequences (arrow keys). Without a tty (non-interactive exec) there is no echo, no prompt and
 * lines end with `\n`.
 */
import { passwordMatches } from '../../kubevirt/cloud-init.js';
import type { GuestIdentity } from '../guest-identity.js';
import { homeOf, runCommand, type CommandResult, type ShellState } from './commands.js';
import { resolvePath } from './filesystem.js';
import { expandWords, splitCommandList, type CommandListItem } from './parse.js';
import type { FileView } from './writable-fs.js';

export type Stream = 'stdout' | 'stderr';

export interface TerminalSessionOptions {
  identity: () => GuestIdentity;
  /** Output towards the user. With a tty both streams are the same terminal. */
  write(text: string, stream: Stream): void;
  tty: boolean;
  /** Name shown in the login banner (`ttyS0`, `tty1`); absent: no login, the shell starts as `user`. */
  loginTty?: string;
  user?: string;
  shellName?: 'bash' | 'sh';
  /** Working directory of a shell started without login (containers start in `/`). */
  cwd?: string;
  /** Writable files (containers); absent: the read-only skeleton of a VM guest. */
  files?: FileView;
  /** The shell ended (exec sessions end the stream; login sessions go back to the login prompt instead). */
  onExit?(status: number): void;
  /** `reboot` was run as root. Absent (containers): there is no init system to ask. */
  onReboot?(): void;
  /** `poweroff`/`halt` was run as root. Absent (containers): there is no init system to ask. */
  onPowerOff?(): void;
}

type Mode = 'off' | 'login' | 'password' | 'shell' | 'ended';

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const CTRL_U = 0x15;
const BACKSPACE = 0x08;
const DELETE = 0x7f;
const ESC = 0x1b;

export class TerminalSession {
  private mode: Mode;
  private line = '';
  private state: ShellState;
  private pendingUser = '';
  /** Inside an escape sequence typed by the user (arrow keys): 1 after ESC, 2 inside CSI. */
  private escape = 0;
  private lastWasCr = false;

  constructor(private readonly options: TerminalSessionOptions) {
    const user = options.user ?? 'root';
    this.state = {
      user,
      cwd: options.cwd ?? homeOf(user),
      lastStatus: 0,
      shellName: options.shellName ?? 'bash',
      ...(options.files ? { files: options.files } : {}),
    };
    this.mode = options.loginTty ? 'off' : 'shell';
  }

  /** Logged-in user, or undefined while at the login prompt (tests and the VNC status bar use it). */
  get currentUser(): string | undefined {
    return this.mode === 'shell' ? this.state.user : undefined;
  }

  get isAtLogin(): boolean {
    return this.mode === 'login' || this.mode === 'password';
  }

  /** Show the getty banner and `<host> login: ` (after boot, after logout). */
  showLogin(): void {
    if (!this.options.loginTty) return;
    const id = this.options.identity();
    this.mode = 'login';
    this.line = '';
    this.out(`\n${issueBanner(id, this.options.loginTty)}\n\n${id.hostname} login: `);
  }

  /** The machine is booting or down: input is dropped, nothing is echoed. */
  powerOff(): void {
    this.mode = 'off';
    this.line = '';
  }

  /** Print a fresh prompt and the half-typed line, what a user sees after (re)connecting to a serial port. */
  redraw(): void {
    if (this.mode === 'off' || this.mode === 'ended') return;
    this.out(`\n${this.promptText()}${this.mode === 'password' ? '' : this.line}`);
  }

  /** Start an interactive shell without login (exec with a tty): print the first prompt. */
  startShell(): void {
    if (this.options.tty) this.out(this.promptText());
  }

  /** Run a whole command line without a terminal (exec `sh -c`, one-shot commands). Returns the exit status. */
  runScript(script: string): number {
    this.execute(script);
    return this.state.lastStatus;
  }

  /** stdin reached end of file. */
  endOfInput(): void {
    if (this.mode !== 'shell') return;
    if (this.line.trim()) this.execute(this.line);
    this.line = '';
    if (this.mode === 'shell') this.finish(this.state.lastStatus);
  }

  input(data: string | Uint8Array): void {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
    for (let i = 0; i < text.length; i++) {
      if (this.mode === 'off' || this.mode === 'ended') return;
      this.key(text.charCodeAt(i));
    }
  }

  private key(ch: number): void {
    if (this.escape === 1) {
      this.escape = ch === 0x5b || ch === 0x4f ? 2 : 0; // ESC [ (CSI) or ESC O (SS3)
      return;
    }
    if (this.escape === 2) {
      if (ch >= 0x40 && ch <= 0x7e) this.escape = 0;
      return;
    }
    const cr = ch === 0x0d;
    if (ch === 0x0a && this.lastWasCr) {
      this.lastWasCr = false; // CR LF from a terminal counts once
      return;
    }
    this.lastWasCr = cr;
    if (cr || ch === 0x0a) return this.enter();
    if (!this.options.tty) {
      this.line += String.fromCharCode(ch);
      return;
    }
    switch (ch) {
      case ESC:
        this.escape = 1;
        return;
      case CTRL_C:
        this.out('^C\n');
        this.line = '';
        if (this.mode === 'password') this.mode = 'login';
        if (this.mode === 'login') this.showLogin();
        else this.out(this.promptText());
        return;
      case CTRL_D:
        if (this.mode === 'shell' && this.line === '') {
          this.out(this.options.loginTty ? 'logout\n' : 'exit\n');
          this.exitShell(this.state.lastStatus);
        }
        return;
      case CTRL_U:
        if (this.mode !== 'password') this.out('\b \b'.repeat(this.line.length));
        this.line = '';
        return;
      case BACKSPACE:
      case DELETE:
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          if (this.mode !== 'password') this.out('\b \b');
        }
        return;
      default:
        if (ch < 0x20) return; // other control characters (Tab completion, Ctrl-L...) are not simulated
        this.line += String.fromCharCode(ch);
        if (this.mode !== 'password') this.out(String.fromCharCode(ch));
    }
  }

  private enter(): void {
    const line = this.line;
    this.line = '';
    if (this.options.tty) this.out('\n');
    switch (this.mode) {
      case 'login':
        if (!line.trim()) {
          this.out(`${this.options.identity().hostname} login: `);
          return;
        }
        this.pendingUser = line.trim();
        this.mode = 'password';
        this.out('Password: ');
        return;
      case 'password': {
        const id = this.options.identity();
        if (id.password !== undefined && (this.pendingUser !== id.defaultUser || !passwordMatches(id.password, line))) {
          // What login(1) does after a wrong password: a pause, then the prompt again.
          this.mode = 'login';
          this.out(`\nLogin incorrect\n${id.hostname} login: `);
          return;
        }
        this.login(this.pendingUser);
        return;
      }
      case 'shell':
        this.execute(line);
        if (this.mode === 'shell' && this.options.tty) this.out(this.promptText());
        return;
    }
  }

  private login(user: string): void {
    this.state = {
      user,
      cwd: homeOf(user),
      lastStatus: 0,
      shellName: 'bash',
      ...(this.options.files ? { files: this.options.files } : {}),
    };
    this.mode = 'shell';
    const when = new Date().toUTCString().replace(/,/, '').replace(/ GMT$/, '');
    this.out(`Last login: ${when} on ${this.options.loginTty}\n${this.promptText()}`);
  }

  private execute(script: string): void {
    let items: CommandListItem[];
    try {
      items = splitCommandList(script);
    } catch (err) {
      this.options.write(this.lines(`${this.state.shellName}: ${(err as Error).message}\n`), 'stderr');
      this.state.lastStatus = 2;
      return;
    }
    for (const item of items) {
      if (item.when === 'and' && this.state.lastStatus !== 0) continue;
      if (item.when === 'or' && this.state.lastStatus === 0) continue;
      const env = {
        HOSTNAME: this.options.identity().hostname,
        USER: this.state.user,
        HOME: homeOf(this.state.user),
        PWD: this.state.cwd,
        SHELL: `/bin/${this.state.shellName}`,
        '?': String(this.state.lastStatus),
      };
      const argv = expandWords(item.words, env);
      const result = item.redirect
        ? this.redirected(argv, expandWords([item.redirect.target], env)[0] ?? '', item.redirect.append)
        : runCommand(argv, this.options.identity(), this.state);
      if (result.stdout) this.options.write(this.lines(result.stdout), 'stdout');
      if (result.stderr) this.options.write(this.lines(result.stderr), 'stderr');
      this.state.lastStatus = result.status;
      if (result.action === 'exit') {
        if (this.options.tty && this.options.loginTty) this.out('logout\n');
        this.exitShell(result.status);
        return;
      }
      if (result.action === 'reboot' || result.action === 'poweroff') {
        const handler = result.action === 'reboot' ? this.options.onReboot : this.options.onPowerOff;
        if (handler) {
          handler();
          return;
        }
        // What systemctl prints inside a container, where PID 1 is not systemd.
        this.options.write(
          this.lines(
            "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n",
          ),
          'stderr',
        );
        this.state.lastStatus = 1;
      }
    }
  }

  /** Runs `argv` with its stdout going to `target` (created or truncated, appended to with `>>`). */
  private redirected(argv: string[], target: string, append: boolean): CommandResult {
    const files = this.state.files;
    const shell = this.state.shellName;
    if (!files) return { stdout: '', stderr: `${shell}: ${target}: Read-only file system\n`, status: 1 };
    const path = resolvePath(this.state.cwd, target, homeOf(this.state.user));
    // The shell opens the file before the command runs: `> file` creates it even when the command fails.
    const opened = files.write(path, '', append);
    if (opened) return { stdout: '', stderr: `${shell}: ${target}: ${opened}\n`, status: 1 };
    const result = runCommand(argv, this.options.identity(), this.state);
    if (result.stdout && !result.action) files.write(path, result.stdout, true);
    return { ...result, stdout: '' };
  }

  private exitShell(status: number): void {
    if (this.options.loginTty) this.showLogin();
    else this.finish(status);
  }

  private finish(status: number): void {
    this.mode = 'ended';
    this.options.onExit?.(status);
  }

  private promptText(): string {
    if (this.mode === 'login') return `${this.options.identity().hostname} login: `;
    if (this.mode === 'password') return 'Password: ';
    const { user, cwd } = this.state;
    const home = homeOf(user);
    const sigil = user === 'root' ? '#' : '$';
    if (!this.options.loginTty || debianFamily(this.options.identity()))
      return `${user}@${this.options.identity().hostname}:${cwd === home ? '~' : cwd}${sigil} `;
    const dir = cwd === home ? '~' : cwd === '/' ? '/' : (cwd.split('/').pop() ?? cwd);
    return `[${user}@${this.options.identity().hostname} ${dir}]${sigil} `;
  }

  private out(text: string): void {
    this.options.write(this.lines(text), 'stdout');
  }

  /** Terminal output uses CR LF like a tty with `onlcr`; pipes get plain LF. */
  private lines(text: string): string {
    return this.options.tty ? text.replace(/\r?\n/g, '\r\n') : text;
  }
}

/** Debian and Ubuntu ship a `/etc/issue` and a bash prompt of their own (`user@host:~$`). */
function debianFamily(id: GuestIdentity): boolean {
  return id.os.id === 'debian' || id.os.id === 'ubuntu';
}

/** What agetty prints from `/etc/issue` before the login prompt, per distribution family. */
function issueBanner(id: GuestIdentity, tty: string | undefined): string {
  if (debianFamily(id)) return `${id.os.prettyName} ${id.hostname} ${tty}`;
  return `${id.os.prettyName}\nKernel ${id.os.kernelRelease} on an x86_64 (${tty})`;
}
