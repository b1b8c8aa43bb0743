/**
 * What a cloud image prints while it boots, with the time (guest ms since power-on) each line appears: kernel
 * ring buffer, systemd units, cloud-init. Streamed to the serial port and drawn on the VGA console, so a bridge
 * that relays the serial console can capture a believable boot log.
 */
import type { GuestIdentity } from './guest-identity.js';

export interface BootLine {
  atMs: number;
  text: string;
}

const OK = '[\x1b[0;32m  OK  \x1b[0m]';

function kernel(seconds: number, text: string): BootLine {
  return { atMs: seconds * 1000, text: `[${seconds.toFixed(6).padStart(12)}] ${text}` };
}

/** SeaBIOS and the GRUB menu run before the kernel prints its first line. */
const FIRMWARE_MS = 1200;

/** Boot messages up to (not including) the getty banner, which the login session prints itself. */
export function bootLog(id: GuestIdentity): BootLine[] {
  return kernelAndSystemd(id).map((line) => ({ atMs: line.atMs + FIRMWARE_MS, text: line.text }));
}

function kernelAndSystemd(id: GuestIdentity): BootLine[] {
  const ip = id.nics[0]?.ips.find((a) => !a.includes(':')) ?? '10.0.2.2';
  const unit = (atMs: number, text: string): BootLine => ({ atMs, text: `${OK} ${text}` });
  return [
    kernel(0, `Linux version ${id.os.kernelRelease} (mockbuild@builder) (gcc (GCC) 14.2.1) ${id.os.kernelVersion}`),
    kernel(
      0,
      `Command line: BOOT_IMAGE=/vmlinuz-${id.os.kernelRelease} root=LABEL=root ro console=tty1 console=ttyS0,115200n8`,
    ),
    kernel(0, 'DMI: KubeVirt None/RHEL, BIOS 1.16.3-4.el9 04/01/2014'),
    kernel(0, 'Hypervisor detected: KVM'),
    kernel(0.021337, `Memory: ${id.memoryMiB * 1024 - 187_412}K/${id.memoryMiB * 1024}K available`),
    kernel(0.412019, 'smpboot: CPU0: AMD EPYC Processor (with IBPB) (family: 0x17, model: 0x31, stepping: 0x0)'),
    kernel(1.102347, 'virtio_blk virtio2: [vda] 41943040 512-byte logical blocks (21.5 GB/20.0 GiB)'),
    kernel(1.204518, 'virtio_net virtio0 enp1s0: renamed from eth0'),
    kernel(2.331205, 'EXT4-fs (vda1): mounted filesystem with ordered data mode. Quota mode: none.'),
    kernel(3.010442, 'systemd[1]: systemd 257 running in system mode (+PAM +AUDIT +SELINUX +SECCOMP +TPM2)'),
    kernel(3.02189, `systemd[1]: Hostname set to <${id.hostname}>.`),
    unit(3600, 'Started systemd-journald.service - Journal Service.'),
    unit(4200, 'Finished systemd-remount-fs.service - Remount Root and Kernel File Systems.'),
    unit(4900, 'Reached target local-fs.target - Local File Systems.'),
    unit(5600, 'Started systemd-udevd.service - Rule-based Manager for Device Events and Files.'),
    unit(6300, 'Started NetworkManager.service - Network Manager.'),
    unit(7100, 'Reached target network-online.target - Network is Online.'),
    { atMs: 7400, text: `         Starting cloud-init.service - Cloud-init: Network Stage...` },
    { atMs: 8600, text: `[    8.612004] cloud-init[712]: ci-info: | eth0 | True | ${ip} | 255.255.255.0 | global |` },
    unit(9100, 'Finished cloud-init.service - Cloud-init: Network Stage.'),
    unit(9800, 'Started sshd.service - OpenSSH server daemon.'),
    unit(10200, 'Started qemu-guest-agent.service - QEMU Guest Agent.'),
    unit(10900, 'Reached target multi-user.target - Multi-User System.'),
    {
      atMs: 11800,
      text: `[   11.804216] cloud-init[845]: Cloud-init v. 24.4 finished. Datasource DataSourceNoCloud [seed=/dev/vdb]. Up 11.80 seconds`,
    },
  ];
}

/** How long a boot takes (guest ms) before the login prompt appears. */
export const BOOT_DURATION_MS = FIRMWARE_MS + 12_500;

/** The end of a `poweroff` (after the first shutdown lines). */
export const POWER_OFF_LOG = [
  `${OK} Finished systemd-poweroff.service - System Power Off.`,
  `${OK} Reached target poweroff.target - System Power Off.`,
  '[  212.441093] reboot: Power down',
];

/** Printed before a reboot, before the screen goes blank. */
export const SHUTDOWN_LOG = [
  `${OK} Stopped target multi-user.target - Multi-User System.`,
  `${OK} Stopped sshd.service - OpenSSH server daemon.`,
  `${OK} Finished systemd-reboot.service - System Reboot.`,
  `${OK} Reached target reboot.target - System Reboot.`,
  '[  212.441093] reboot: Restarting system',
];
