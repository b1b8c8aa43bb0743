/**
 * Corral's image as the embedded cluster's kubelet runs it. The embedded cluster runs no container images; whoever
 * starts it (npm start --demo, the tests) may hand it a container runtime (src/sim/module.ts ContainerRuntime). This
 * one takes Corral's own image when its arguments are `schedule …` and runs the same entry point the image's
 * `corral schedule` runs (schedule-cli.ts), in this process, with the kubeconfig the kubelet built from the pod's
 * ServiceAccount token — so a schedule's Job really performs its run against the embedded apiserver, under the
 * runner's RBAC. Any other image is left to the embedded cluster's scripted workloads.
 *
 * The shape is declared here rather than imported: nothing in src/server imports src/sim.
 */
import { runScheduleCli } from './schedule-cli';

export interface ContainerRunLike {
  image: string;
  args: string[];
  command: string[];
  env: Record<string, string>;
  kubeconfig?: string;
  log(line: string): void;
}

/** `ghcr.io/corral-dev/corral:0.1.0`, `…/corral@sha256:…`, or whatever CORRAL_IMAGE names. */
export function isCorralImage(image: string, configured = process.env.CORRAL_IMAGE): boolean {
  const repo = (ref: string) => ref.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
  return repo(image) === 'ghcr.io/corral-dev/corral' || (!!configured && repo(image) === repo(configured));
}

export function corralContainerRuntime(): (run: ContainerRunLike) => Promise<number> | undefined {
  return (run) => {
    if (!isCorralImage(run.image)) return undefined;
    // The image's ENTRYPOINT is `corral`; a command override naming it is the same thing.
    const argv = [...run.command.filter((c) => !/(^|\/)corral(\.mjs)?$/.test(c) && c !== 'node'), ...run.args];
    if (argv[0] !== 'schedule') return undefined;
    if (!run.kubeconfig) {
      run.log('corral schedule: no ServiceAccount token is mounted (the runner needs its token Secret)');
      return Promise.resolve(1);
    }
    const env = { ...run.env } as NodeJS.ProcessEnv;
    return runScheduleCli(argv.slice(1), { out: run.log, err: run.log }, env, undefined, run.kubeconfig);
  };
}
