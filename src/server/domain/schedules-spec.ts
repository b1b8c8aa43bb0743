/**
 * What a schedule is in the cluster. A schedule is one CronJob in Corral's namespace, named
 * `corral-sched-<name>`, labelled `corral.dev/schedule=<name>` and with its extension's label (so uninstalling the
 * extension removes it); its definition (type, target, keep or action) is the annotation `corral.dev/schedule`.
 * Its Job runs Corral's own image as `corral schedule run <name>` under the extension's runner ServiceAccount.
 * The runner keeps each schedule's last runs in the ConfigMap `corral-sched-<name>-runs`, owned by the CronJob.
 * This file also holds the two extensions' catalog entries: the runner's ServiceAccount, its token Secret and the
 * RBAC it needs.
 */
import type { KObject } from './cluster-port';
import type { ExtensionObject, ExtensionSpec } from './extensions-catalog';

export const SCHEDULE_LABEL = 'corral.dev/schedule';
export const SCHEDULE_TYPE_LABEL = 'corral.dev/schedule-type';
export const SCHEDULE_ANNOTATION = 'corral.dev/schedule';
/** On snapshots a schedule took: when (ISO with ms; the pruning order). */
export const SCHEDULED_AT_ANNOTATION = 'corral.dev/scheduled-at';
export const RUNS_LABEL = 'corral.dev/schedule-runs';
export const RUNS_KEY = 'runs.json';
/** Runs kept per schedule in its runs ConfigMap. */
export const RUNS_KEPT = 20;
/** Corral's image as deploy/base/kustomization.yaml names it; CORRAL_IMAGE overrides it. */
export const DEFAULT_RUNNER_IMAGE = 'ghcr.io/corral-dev/corral:0.1.0';

export type ScheduleType = 'snapshot' | 'power';
export type ScheduleTarget = { kind: 'vm'; namespace: string; name: string } | { kind: 'tag'; tag: string };

export interface ScheduleDefinition {
  type: ScheduleType;
  target: ScheduleTarget;
  /** Snapshot schedules: how many of this schedule's snapshots to keep per VM. */
  keep?: number;
  /** Power schedules: what to do. */
  action?: 'start' | 'stop';
  description?: string;
}

export interface ScheduleInput extends ScheduleDefinition {
  name: string;
  /** Five-field cron expression or a macro (@daily), UTC. */
  cron: string;
  enabled: boolean;
}

export const EXTENSION_OF: Record<ScheduleType, string> = {
  snapshot: 'snapshot-schedules',
  power: 'power-schedules',
};

export const RUNNER_SA: Record<ScheduleType, string> = {
  snapshot: 'corral-snapshot-scheduler',
  power: 'corral-power-scheduler',
};

export const cronJobName = (name: string) => `corral-sched-${name}`;
export const runsConfigMapName = (name: string) => `corral-sched-${name}-runs`;

/** The CronJob for a schedule (applied with server-side apply, so an update restates it whole). */
export function scheduleCronJob(input: ScheduleInput, namespace: string, image: string): KObject {
  const def: ScheduleDefinition = {
    type: input.type,
    target: input.target,
    ...(input.type === 'snapshot' ? { keep: input.keep ?? 7 } : { action: input.action ?? 'stop' }),
    ...(input.description ? { description: input.description } : {}),
  };
  const labels = {
    [SCHEDULE_LABEL]: input.name,
    [SCHEDULE_TYPE_LABEL]: input.type,
    'corral.dev/extension': EXTENSION_OF[input.type],
    'app.kubernetes.io/managed-by': 'corral',
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: cronJobName(input.name),
      namespace,
      labels,
      annotations: { [SCHEDULE_ANNOTATION]: JSON.stringify(def) },
    },
    spec: {
      schedule: input.cron,
      timeZone: 'Etc/UTC',
      suspend: !input.enabled,
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 600,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels: { [SCHEDULE_LABEL]: input.name } },
        spec: {
          backoffLimit: 0,
          ttlSecondsAfterFinished: 86_400,
          template: {
            metadata: { labels: { [SCHEDULE_LABEL]: input.name } },
            spec: {
              serviceAccountName: RUNNER_SA[input.type],
              restartPolicy: 'Never',
              containers: [
                {
                  name: 'runner',
                  image,
                  args: ['schedule', 'run', input.name, '--namespace', namespace],
                  resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
                  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
                },
              ],
              securityContext: { runAsNonRoot: true, runAsUser: 10001 },
            },
          },
        },
      },
    },
  };
}

/** The definition a CronJob carries, or undefined when its annotation is missing or corrupt. */
export function definitionOf(cj: KObject): ScheduleDefinition | undefined {
  const raw = cj.metadata.annotations?.[SCHEDULE_ANNOTATION];
  if (!raw) return undefined;
  try {
    const d = JSON.parse(raw) as Partial<ScheduleDefinition>;
    if (d.type !== 'snapshot' && d.type !== 'power') return undefined;
    const t = d.target as Partial<{ kind: string; namespace: string; name: string; tag: string }> | undefined;
    if (t?.kind === 'vm' && typeof t.namespace === 'string' && typeof t.name === 'string')
      return { ...d, type: d.type, target: { kind: 'vm', namespace: t.namespace, name: t.name } };
    if (t?.kind === 'tag' && typeof t.tag === 'string')
      return { ...d, type: d.type, target: { kind: 'tag', tag: t.tag } };
  } catch {
    // A hand-edited, unparseable annotation: the schedule reads as broken.
  }
  return undefined;
}

/** The ServiceAccount, its token Secret and the RBAC one schedule extension's runner needs. */
function runnerObjects(
  type: ScheduleType,
  namespace: string,
  clusterRules: Record<string, unknown>[],
): ExtensionObject[] {
  const sa = RUNNER_SA[type];
  const rbac = 'rbac.authorization.k8s.io/v1';
  return [
    { kind: 'ServiceAccount', object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace } } },
    {
      kind: 'Secret',
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/service-account-token',
        metadata: { name: `${sa}-token`, namespace, annotations: { 'kubernetes.io/service-account.name': sa } },
      },
    },
    {
      kind: 'Role',
      object: {
        apiVersion: rbac,
        kind: 'Role',
        metadata: { name: sa, namespace },
        rules: [
          { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update', 'patch'] },
        ],
      },
    },
    {
      kind: 'RoleBinding',
      object: {
        apiVersion: rbac,
        kind: 'RoleBinding',
        metadata: { name: sa, namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
        subjects: [{ kind: 'ServiceAccount', name: sa, namespace }],
      },
    },
    {
      kind: 'ClusterRole',
      object: { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: sa }, rules: clusterRules },
    },
    {
      kind: 'ClusterRoleBinding',
      object: {
        apiVersion: rbac,
        kind: 'ClusterRoleBinding',
        metadata: { name: sa },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: sa },
        subjects: [{ kind: 'ServiceAccount', name: sa, namespace }],
      },
    },
  ];
}

const installsOf = (type: ScheduleType, what: string) => [
  `ServiceAccount ${RUNNER_SA[type]} and its token Secret: the identity the schedule's runner Job runs as`,
  `Role + RoleBinding ${RUNNER_SA[type]}: read its CronJob, write its run history ConfigMap`,
  `ClusterRole + ClusterRoleBinding ${RUNNER_SA[type]}: ${what}`,
  'one CronJob per schedule (created from the Schedules page), removed with the extension',
];

export const snapshotSchedulesExtension: ExtensionSpec = {
  name: 'snapshot-schedules',
  description:
    'Snapshot VMs on a schedule, per VM or per tag ("nightly, keep 7"): a CronJob per schedule runs Corral\'s ' +
    'runner, which takes VirtualMachineSnapshots and prunes the oldest the schedule took beyond its keep count.',
  version: '0.1.0',
  installs: installsOf('snapshot', 'list VMs; create, list and delete VirtualMachineSnapshots'),
  needs: [
    "KubeVirt's Snapshot feature gate and a VolumeSnapshotClass (see Health)",
    "Corral's image pullable by the cluster (CORRAL_IMAGE)",
  ],
  owns: ['CronJob', 'ConfigMap'],
  objects: (namespace) =>
    runnerObjects('snapshot', namespace, [
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'list'] },
      {
        apiGroups: ['snapshot.kubevirt.io'],
        resources: ['virtualmachinesnapshots'],
        verbs: ['get', 'list', 'create', 'delete'],
      },
    ]),
};

export const powerSchedulesExtension: ExtensionSpec = {
  name: 'power-schedules',
  description:
    'Start or stop VMs by tag (or one VM) on a schedule, e.g. stop the lab at 19:00 on weekdays: a CronJob per ' +
    "schedule runs Corral's runner, which calls KubeVirt's start/stop on every matching VM.",
  version: '0.1.0',
  installs: installsOf('power', 'list VMs; call their start and stop subresources'),
  needs: ["Corral's image pullable by the cluster (CORRAL_IMAGE)"],
  owns: ['CronJob', 'ConfigMap'],
  objects: (namespace) =>
    runnerObjects('power', namespace, [
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'list'] },
      {
        apiGroups: ['subresources.kubevirt.io'],
        resources: ['virtualmachines/start', 'virtualmachines/stop'],
        verbs: ['update'],
      },
    ]),
};
