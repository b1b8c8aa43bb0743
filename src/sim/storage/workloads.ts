/**
 * What a Job's container "does" in the embedded cluster. No container runs; a workload is a timed script of log
 * lines ending in an exit code, derived from the pod spec:
 *
 * - bootc-image-builder (image name contains `bootc-image-builder`): builds the bootc image given as the last
 *   positional argument into the PVC mounted at `/output` (or the pod's first PVC). It fails like the real tool
 *   when the reference is malformed, its registry cannot resolve or the image does not exist (sources.ts rules).
 * - any other container: runs `sim.corral.dev/run-seconds` (default 10) and exits with
 *   `sim.corral.dev/exit-code` (default 0), both read from the pod template's annotations.
 */
import { probeImageReference } from './sources.js';
import { arr, rec, str } from './util.js';

export interface WorkloadStep {
  /** Real-cluster ms after the previous step. */
  afterMs: number;
  lines: string[];
}

export interface Workload {
  steps: WorkloadStep[];
  exitCode: number;
  /** On success: the PVC the workload filled and what it now contains. */
  output?: { claim: string; content: string };
  failureReason?: string;
}

export const RUN_SECONDS_ANNOTATION = 'sim.corral.dev/run-seconds';
export const EXIT_CODE_ANNOTATION = 'sim.corral.dev/exit-code';

/** Flags of bootc-image-builder that take a separate value. */
const VALUE_FLAGS = new Set([
  '--type',
  '--rootfs',
  '--config',
  '--output',
  '--target-arch',
  '--chown',
  '--progress',
  '--log-level',
  '--tls-verify',
  '--use-librepo',
  '--aws-ami-name',
  '--aws-bucket',
  '--aws-region',
]);
const SUBCOMMANDS = new Set(['build', 'manifest']);

export function isBootcBuilder(image: string): boolean {
  return image.includes('bootc-image-builder');
}

/** The image to build and the disk type from bootc-image-builder's argv. */
export function parseBootcArgs(argv: string[]): { image?: string; type: string } {
  let image: string | undefined;
  let type = 'qcow2';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--type=')) type = arg.slice('--type='.length);
    else if (arg === '--type') type = argv[i + 1] ?? type;
    if (VALUE_FLAGS.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-') || SUBCOMMANDS.has(arg) || arg === 'bootc-image-builder') continue;
    image = arg;
  }
  return { image, type };
}

function outputClaim(podSpec: Record<string, unknown>, container: Record<string, unknown>): string | undefined {
  const volumes = arr(podSpec.volumes).map((v) => rec(v));
  const mount = arr(container.volumeMounts)
    .map((m) => rec(m))
    .find((m) => m.mountPath === '/output');
  const byMount = mount && volumes.find((v) => v.name === mount.name);
  const volume = byMount ?? volumes.find((v) => v.persistentVolumeClaim);
  return str(rec(volume?.persistentVolumeClaim).claimName);
}

export function bootcWorkload(podSpec: Record<string, unknown>, container: Record<string, unknown>): Workload {
  const argv = [...arr(container.command), ...arr(container.args)].filter((a): a is string => typeof a === 'string');
  const { image, type } = parseBootcArgs(argv);
  if (!image) {
    return {
      steps: [{ afterMs: 500, lines: ['Error: accepts 1 arg(s), received 0'] }],
      exitCode: 1,
      failureReason: 'Error',
    };
  }
  const probe = probeImageReference(image);
  if (!probe.ok) {
    return {
      steps: [
        { afterMs: 1000, lines: [`Trying to pull ${image}...`] },
        {
          afterMs: probe.fatal ? 200 : 4000,
          lines: [`Error: cannot build manifest: failed to pull ${image}: ${probe.message}`],
        },
      ],
      exitCode: 1,
      failureReason: 'Error',
    };
  }
  const claim = outputClaim(podSpec, container);
  if (!claim) {
    return {
      steps: [{ afterMs: 1000, lines: ['Error: output directory /output is not a mounted volume'] }],
      exitCode: 1,
      failureReason: 'Error',
    };
  }
  const file = type === 'raw' ? 'image/disk.raw' : type === 'iso' ? 'bootiso/install.iso' : `${type}/disk.${type}`;
  return {
    steps: [
      { afterMs: 1000, lines: [`Trying to pull ${image}...`, 'Getting image source signatures'] },
      {
        afterMs: 20_000,
        lines: [
          'Copying blob sha256:…done',
          'Writing manifest to image destination',
          `Generating manifest manifest-${type}.json`,
        ],
      },
      { afterMs: 5000, lines: ['DONE', `Building manifest-${type}.json`, 'starting pipeline build'] },
      { afterMs: 15_000, lines: ['Pipeline build: org.osbuild.rpm', 'Pipeline build: org.osbuild.selinux'] },
      {
        afterMs: 30_000,
        lines: ['Pipeline image: org.osbuild.bootc.install-to-filesystem', 'Pipeline image: org.osbuild.fstab'],
      },
      { afterMs: 25_000, lines: [`Pipeline ${type}: org.osbuild.qemu`, 'Build complete!'] },
      { afterMs: 2000, lines: ['Results saved in', `/output/${file}`] },
    ],
    exitCode: 0,
    output: { claim, content: `bootc:${image}` },
  };
}

export function genericWorkload(
  annotations: Record<string, string> | undefined,
  container: Record<string, unknown>,
): Workload {
  const seconds = Number(annotations?.[RUN_SECONDS_ANNOTATION] ?? 10);
  const exitCode = Number(annotations?.[EXIT_CODE_ANNOTATION] ?? 0);
  const runMs = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 10_000;
  const code = Number.isInteger(exitCode) && exitCode >= 0 && exitCode <= 255 ? exitCode : 1;
  return {
    steps: [
      { afterMs: 0, lines: [`started ${str(container.image) ?? 'container'}`] },
      { afterMs: runMs, lines: [code === 0 ? 'finished' : `exited with code ${code}`] },
    ],
    exitCode: code,
    ...(code === 0 ? {} : { failureReason: 'Error' }),
  };
}

export function workloadFor(
  podSpec: Record<string, unknown>,
  annotations: Record<string, string> | undefined,
): Workload {
  const container = rec(arr(podSpec.containers)[0]);
  return isBootcBuilder(str(container.image) ?? '')
    ? bootcWorkload(podSpec, container)
    : genericWorkload(annotations, container);
}
