/**
 * One running VMI as its consoles see it: a serial port (ttyS0) and a VGA text console (tty1), each with its own
 * getty and shell, sharing the boot sequence. State lives as long as the VMI runs, so reconnecting to the serial
 * port finds the same shell (like a real serial line) and the VNC screen keeps its contents.
 */
import type { SimClock } from '../clock.js';
import { BOOT_DURATION_MS, bootLog, POWER_OFF_LOG, SHUTDOWN_LOG } from './boot-log.js';
import type { GuestIdentity } from './guest-identity.js';
import { KeyboardState } from './keysyms.js';
import { TerminalSession } from './shell/terminal-session.js';
import { TextScreen } from './text-screen.js';

export type SerialSink = (data: Buffer) => void;

/** Guest ms between the last shutdown line and the first boot line of a reboot. */
const REBOOT_GAP_MS = 1500;

export class GuestMachine {
  readonly screen = new TextScreen();
  readonly serial: TerminalSession;
  readonly vga: TerminalSession;
  private readonly keyboard = new KeyboardState();
  private readonly serialSinks = new Set<SerialSink>();
  private cancelBoot: (() => void)[] = [];
  private booting = false;
  /** The VMI is paused: the vCPUs do not run, so nothing is echoed or printed; typed input waits in the buffer. */
  private paused = false;
  private readonly pausedInput: (() => void)[] = [];
  /** Wall-clock ms of the last in-guest reboot, which resets `uptime` although the VMI keeps running. */
  private rebootedAt: number | undefined;
  private readonly identity: () => GuestIdentity;

  constructor(
    vmiIdentity: () => GuestIdentity,
    private readonly clock: SimClock,
    /** Called once the guest has shut itself down (`poweroff`): the VMI must go to Succeeded. */
    private readonly onPoweredOff: () => void = () => undefined,
  ) {
    this.identity = () => {
      const id = vmiIdentity();
      return this.rebootedAt === undefined ? id : { ...id, bootedAt: this.rebootedAt };
    };
    const identity = this.identity;
    this.serial = new TerminalSession({
      identity,
      tty: true,
      loginTty: 'ttyS0',
      write: (text) => this.emitSerial(text),
      onReboot: () => this.reboot(),
      onPowerOff: () => this.powerOff(),
    });
    this.vga = new TerminalSession({
      identity,
      tty: true,
      loginTty: 'tty1',
      write: (text) => this.screen.write(text),
      onReboot: () => this.reboot(),
      onPowerOff: () => this.powerOff(),
    });
    this.refreshStatusBar();
  }

  get isBooting(): boolean {
    return this.booting;
  }

  /** Power on: stream the boot log to both consoles, then show the login prompts. */
  boot(): void {
    this.stopTimers();
    this.booting = true;
    this.serial.powerOff();
    this.vga.powerOff();
    this.screen.clear();
    this.refreshStatusBar();
    for (const line of bootLog(this.identity())) {
      this.cancelBoot.push(this.clock.after(line.atMs, () => this.whenRunning(() => this.print(`${line.text}\r\n`))));
    }
    this.cancelBoot.push(this.clock.after(BOOT_DURATION_MS, () => this.whenRunning(() => this.finishBoot())));
  }

  /** The guest is already up (it was running before anyone looked): go straight to the login prompts. */
  alreadyRunning(): void {
    this.stopTimers();
    this.finishBoot();
  }

  /** Ctrl-Alt-Del or `reboot`: shutdown messages, a blank screen, then a fresh boot. The VMI keeps running. */
  reboot(): void {
    this.stopTimers();
    this.booting = true;
    this.serial.powerOff();
    this.vga.powerOff();
    this.print('\r\n');
    for (const line of SHUTDOWN_LOG) this.print(`${line}\r\n`);
    this.cancelBoot.push(
      this.clock.after(REBOOT_GAP_MS, () => {
        this.rebootedAt = Date.now();
        this.boot();
      }),
    );
  }

  /** `poweroff` in the guest: shutdown messages, then the domain ends and the VMI is reported Succeeded. */
  powerOff(): void {
    this.stopTimers();
    this.booting = true;
    this.serial.powerOff();
    this.vga.powerOff();
    this.print('\r\n');
    for (const line of SHUTDOWN_LOG.slice(0, -2)) this.print(`${line}\r\n`);
    this.print(`${POWER_OFF_LOG.join('\r\n')}\r\n`);
    this.cancelBoot.push(this.clock.after(REBOOT_GAP_MS, () => this.onPoweredOff()));
  }

  /** The VMI stopped: no more output, timers cancelled. */
  shutdown(): void {
    this.stopTimers();
    this.serial.powerOff();
    this.vga.powerOff();
    this.serialSinks.clear();
  }

  /** Connect a serial client. Like a real serial port nothing is replayed; the current prompt is redrawn. */
  attachSerial(sink: SerialSink): () => void {
    this.serialSinks.add(sink);
    if (!this.booting) this.serial.redraw();
    return () => this.serialSinks.delete(sink);
  }

  serialInput(data: Buffer): void {
    this.whenRunning(() => this.serial.input(data));
  }

  /** Run `step` now, or when the VMI is unpaused (a paused guest makes no progress). */
  private whenRunning(step: () => void): void {
    if (this.paused) this.pausedInput.push(step);
    else step();
  }

  /** Pause/unpause (the VMI's `Paused` condition); on unpause the input typed meanwhile is processed in order. */
  setPaused(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (!paused) for (const replay of this.pausedInput.splice(0)) replay();
  }

  /** An RFB KeyEvent from the VNC viewer. */
  vncKey(keysym: number, down: boolean): void {
    if (this.paused) {
      this.whenRunning(() => this.vncKey(keysym, down));
      return;
    }
    const outcome = this.keyboard.key(keysym, down);
    if (outcome.kind === 'ctrl-alt-del') this.reboot();
    else if (outcome.kind === 'bytes') this.vga.input(outcome.bytes);
  }

  private finishBoot(): void {
    this.booting = false;
    this.refreshStatusBar();
    this.serial.showLogin();
    this.vga.showLogin();
  }

  private refreshStatusBar(): void {
    const id = this.identity();
    this.screen.setStatus(`${id.hostname} - ${id.os.prettyName}`, this.booting ? 'booting' : 'tty1');
  }

  private print(text: string): void {
    this.emitSerial(text);
    this.screen.write(text);
  }

  private emitSerial(text: string): void {
    if (this.serialSinks.size === 0) return;
    const bytes = Buffer.from(text, 'utf8');
    for (const sink of this.serialSinks) sink(bytes);
  }

  private stopTimers(): void {
    for (const cancel of this.cancelBoot) cancel();
    this.cancelBoot = [];
  }
}
