/**
 * A minimal batch/v1 Job controller: one pod at a time (parallelism 1) until `completions` pods succeeded, a new
 * pod per failure with back-off until `backoffLimit` is exceeded, and the status a real Job reports (`active`,
 * `succeeded`, `failed`, `startTime`, `completionTime`, conditions SuccessCriteriaMet/Complete or
 * FailureTarget/Failed). What each pod does comes from workloads.ts, or from the ContainerRuntime registered for
 * its image (module.ts), which runs it for real with the ServiceAccount's token; its log lines go to the pod's log.
 */
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { DISK_CONTENT_ANNOTATION, S } from './keys.js';
import { appendPodLog, ensurePod, setPodTerminated, whenNoKubelet } from './pods.js';
import { objId, type Runtime } from './runtime.js';
import { arr, nowTimestamp, ownerRef, rec, setCondition, spec, status, statusOf, str } from './util.js';
import { workloadFor, type Workload } from './workloads.js';

const COMPONENT = 'job-controller';
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const BACKOFF_MS = (failures: number) => Math.min(360_000, 10_000 * 2 ** Math.max(0, failures - 1));

export function startJobController(rt: Runtime): void {
  if (!rt.serves(S.jobs)) return;
  /** Pods whose workload script is running (by uid). */
  const running = new Set<string>();
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`job:${ns ?? ''}/${name}`, () => reconcile(rt, running, ns, name));
  rt.on(S.jobs, (ev) => {
    if (ev.type === 'DELETED') rt.cancelAll(objId('job', ev.object));
    else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  rt.on(S.pods, (ev) => {
    const owner = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'Job');
    if (!owner) return;
    if (ev.type === 'DELETED') running.delete(ev.object.metadata.uid);
    enqueue(ev.object.metadata.namespace, owner.name);
  });
  for (const job of rt.list(S.jobs)) enqueue(job.metadata.namespace, job.metadata.name);
}

function isFinished(job: KObject): boolean {
  return ((status(job).conditions as unknown[] | undefined) ?? []).some((c) => {
    const cond = rec(c);
    return (cond.type === 'Complete' || cond.type === 'Failed') && cond.status === 'True';
  });
}

function positiveInt(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function patchStatus(rt: Runtime, job: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.jobs, job.metadata.namespace, job.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function reconcile(rt: Runtime, running: Set<string>, ns: string | undefined, name: string): void {
  const job = rt.get(S.jobs, ns, name);
  if (!job || job.metadata.deletionTimestamp || isFinished(job) || spec(job).suspend === true) return;
  const pods = rt.list(S.pods, ns).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
  const succeeded = pods.filter((p) => status(p).phase === 'Succeeded').length;
  const failed = pods.filter((p) => status(p).phase === 'Failed').length;
  const active = pods.filter(
    (p) => status(p).phase !== 'Succeeded' && status(p).phase !== 'Failed' && !p.metadata.deletionTimestamp,
  );
  const ready = active.filter((p) => status(p).phase === 'Running').length;
  const completions = positiveInt(spec(job).completions, 1);
  const backoffLimit = positiveInt(spec(job).backoffLimit, 6);
  const now = nowTimestamp();
  if (succeeded >= completions) {
    patchStatus(rt, job, (st) => {
      Object.assign(st, {
        active: 0,
        ready: 0,
        succeeded,
        failed,
        terminating: 0,
        completionTime: now,
        uncountedTerminatedPods: {},
      });
      if (failed === 0) delete st.failed;
      setCondition(
        st,
        {
          type: 'SuccessCriteriaMet',
          status: 'True',
          reason: 'CompletionsReached',
          message: 'Reached expected number of succeeded pods',
        },
        { probe: true },
      );
      setCondition(
        st,
        {
          type: 'Complete',
          status: 'True',
          reason: 'CompletionsReached',
          message: 'Reached expected number of succeeded pods',
        },
        { probe: true },
      );
    });
    recordEvent(rt.store, job, 'Completed', 'Job completed', { component: COMPONENT });
    return;
  }
  if (failed > backoffLimit) {
    patchStatus(rt, job, (st) => {
      Object.assign(st, { active: 0, ready: 0, failed, terminating: 0, uncountedTerminatedPods: {} });
      const message = 'Job has reached the specified backoff limit';
      setCondition(
        st,
        { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message },
        { probe: true },
      );
      setCondition(st, { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message }, { probe: true });
    });
    recordEvent(rt.store, job, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', {
      type: 'Warning',
      component: COMPONENT,
    });
    return;
  }
  patchStatus(rt, job, (st) => {
    st.startTime ??= now;
    st.active = active.length;
    st.ready = ready;
    st.terminating = 0;
    st.uncountedTerminatedPods = {};
    if (succeeded) st.succeeded = succeeded;
    if (failed) st.failed = failed;
  });
  if (!active.length) {
    const id = `${objId('job', job)}:create`;
    if (failed === 0) createPod(rt, job);
    else
      rt.after(id, BACKOFF_MS(failed), () => {
        const current = rt.get(S.jobs, ns, name);
        if (current && !isFinished(current)) createPod(rt, current);
      });
    return;
  }
  for (const pod of active) {
    if (status(pod).phase === 'Running') {
      if (!running.has(pod.metadata.uid)) {
        running.add(pod.metadata.uid);
        if (!runContainer(rt, pod)) runWorkload(rt, pod, workloadFor(spec(pod), pod.metadata.annotations), 0);
      }
    } else {
      whenNoKubelet(rt, pod);
    }
  }
}

function podName(job: KObject): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return `${job.metadata.name}-${suffix}`;
}

function createPod(rt: Runtime, job: KObject): void {
  const template = rec(spec(job).template);
  const meta = rec(template.metadata);
  const podSpec = structuredClone(rec(template.spec));
  podSpec.restartPolicy ??= 'Never';
  const jobLabels = {
    'batch.kubernetes.io/controller-uid': job.metadata.uid,
    'batch.kubernetes.io/job-name': job.metadata.name,
    'controller-uid': job.metadata.uid,
    'job-name': job.metadata.name,
  };
  const name = podName(job);
  ensurePod(rt, {
    namespace: job.metadata.namespace ?? 'default',
    name,
    driver: 'job',
    labels: { ...(rec(meta.labels) as Record<string, string>), ...jobLabels },
    annotations: rec(meta.annotations) as Record<string, string>,
    owner: ownerRef(job),
    podSpec,
  });
  recordEvent(rt.store, job, 'SuccessfulCreate', `Created pod: ${name}`, { component: COMPONENT });
}

/**
 * Hands the pod's first container to the registered ContainerRuntime when it takes the image (see module.ts): its log
 * lines go to the pod's log and its exit code ends the pod. False when no runtime takes it.
 */
function runContainer(rt: Runtime, pod: KObject): boolean {
  const runtime = rt.ctx.containerRuntime;
  if (!runtime) return false;
  const ns = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name;
  const podSpec = spec(pod);
  const container = rec(arr(podSpec.containers)[0]);
  const strings = (v: unknown) => arr(v).filter((x): x is string => typeof x === 'string');
  const env: Record<string, string> = {};
  for (const e of arr(container.env).map(rec)) {
    if (typeof e.name === 'string' && typeof e.value === 'string') env[e.name] = e.value;
  }
  const token = podSpec.automountServiceAccountToken === false ? undefined : serviceAccountToken(rt, pod);
  const alive = () => {
    const current = rt.get(S.pods, ns, name);
    return current?.metadata.uid === pod.metadata.uid && !current.metadata.deletionTimestamp;
  };
  const run = runtime({
    namespace: ns,
    pod: name,
    image: str(container.image) ?? '',
    command: strings(container.command),
    args: strings(container.args),
    env,
    ...(token ? { kubeconfig: podKubeconfig(rt.ctx.baseUrl(), ns, token) } : {}),
    log: (line) => {
      if (alive()) appendPodLog(rt, ns, name, [line]);
    },
  });
  if (!run) return false;
  const finish = (exitCode: number, message?: string) => {
    if (!alive()) return;
    if (message) appendPodLog(rt, ns, name, [message]);
    setPodTerminated(rt, ns, name, { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' });
  };
  run.then(
    (code) => finish(code),
    (err: unknown) => finish(1, `container failed: ${err instanceof Error ? err.message : String(err)}`),
  );
  return true;
}

/** The token of the pod's ServiceAccount's `kubernetes.io/service-account-token` Secret, if it has one. */
function serviceAccountToken(rt: Runtime, pod: KObject): string | undefined {
  const ns = pod.metadata.namespace ?? 'default';
  const sa = str(spec(pod).serviceAccountName) ?? 'default';
  for (const secret of rt.list(S.secrets, ns)) {
    if (secret.type !== 'kubernetes.io/service-account-token') continue;
    if (secret.metadata.annotations?.['kubernetes.io/service-account.name'] !== sa) continue;
    const token = str(rec(secret.data).token);
    if (token) return Buffer.from(token, 'base64').toString('utf8');
  }
  return undefined;
}

function podKubeconfig(url: string, namespace: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: in-cluster',
    '  cluster:',
    `    server: "${url}"`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: service-account',
    '  user:',
    `    token: "${token}"`,
    'contexts:',
    '- name: in-cluster',
    '  context:',
    '    cluster: in-cluster',
    '    user: service-account',
    `    namespace: ${namespace}`,
    'current-context: in-cluster',
    '',
  ].join('\n');
}

function runWorkload(rt: Runtime, pod: KObject, workload: Workload, index: number): void {
  const ns = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name;
  const step = workload.steps[index];
  const alive = () => {
    const current = rt.get(S.pods, ns, name);
    return current && current.metadata.uid === pod.metadata.uid && !current.metadata.deletionTimestamp
      ? current
      : undefined;
  };
  if (!step) {
    if (!alive()) return;
    if (workload.exitCode === 0 && workload.output && rt.get(S.pvcs, ns, workload.output.claim)) {
      const content = workload.output.content;
      rt.store.mutate(S.pvcs, ns, workload.output.claim, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, [DISK_CONTENT_ANNOTATION]: content };
      });
    }
    setPodTerminated(rt, ns, name, {
      exitCode: workload.exitCode,
      reason: workload.exitCode === 0 ? 'Completed' : (workload.failureReason ?? 'Error'),
    });
    return;
  }
  rt.after(`jobpod:${pod.metadata.uid}:${index}`, step.afterMs, () => {
    if (!alive()) return;
    appendPodLog(rt, ns, name, step.lines);
    runWorkload(rt, pod, workload, index + 1);
  });
}
