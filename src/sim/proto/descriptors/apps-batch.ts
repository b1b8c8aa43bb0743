/**
 * Protobuf field descriptors: k8s.io/api/apps/v1 Deployment, k8s.io/api/batch/v1 Job and CronJob, and the k8s.io/api/scheduling/v1alpha3 messages a Job spec refers to.
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const APPS_BATCH = `
Job: 1 metadata ObjectMeta, 2 spec JobSpec, 3 status JobStatus
CronJob: 1 metadata ObjectMeta, 2 spec CronJobSpec, 3 status CronJobStatus
CronJobSpec: 1 schedule string, 8 timeZone? string, 2 startingDeadlineSeconds? int64, 3 concurrencyPolicy string,
  4 suspend? bool, 5 jobTemplate JobTemplateSpec, 6 successfulJobsHistoryLimit? int32, 7 failedJobsHistoryLimit? int32
CronJobStatus: 1 active []ObjectReference, 4 lastScheduleTime Time, 5 lastSuccessfulTime Time
JobTemplateSpec: 1 metadata ObjectMeta, 2 spec JobSpec
Deployment: 1 metadata ObjectMeta, 2 spec DeploymentSpec, 3 status DeploymentStatus
JobSpec: 1 parallelism? int32, 2 completions? int32, 3 activeDeadlineSeconds? int64, 4 selector LabelSelector,
  5 manualSelector? bool, 6 template PodTemplateSpec, 7 backoffLimit? int32, 8 ttlSecondsAfterFinished? int32,
  9 completionMode? string, 10 suspend? bool, 11 podFailurePolicy PodFailurePolicy, 12 backoffLimitPerIndex? int32,
  13 maxFailedIndexes? int32, 14 podReplacementPolicy? string, 15 managedBy? string, 16 successPolicy SuccessPolicy,
  17 scheduling JobSchedulingConfiguration
JobStatus: 1 conditions []JobCondition, 2 startTime Time, 3 completionTime Time, 4 active int32, 5 succeeded int32,
  6 failed int32, 7 completedIndexes string, 8 uncountedTerminatedPods UncountedTerminatedPods, 9 ready? int32,
  10 failedIndexes string, 11 terminating? int32
DeploymentSpec: 1 replicas? int32, 2 selector LabelSelector, 3 template PodTemplateSpec,
  4 strategy DeploymentStrategy, 5 minReadySeconds int32, 6 revisionHistoryLimit? int32, 7 paused bool,
  9 progressDeadlineSeconds? int32
DeploymentStatus: 1 observedGeneration int64, 2 replicas int32, 3 updatedReplicas int32, 4 availableReplicas int32,
  5 unavailableReplicas int32, 6 conditions []DeploymentCondition, 7 readyReplicas int32, 8 collisionCount? int32,
  9 terminatingReplicas? int32
PodFailurePolicy: 1 rules []PodFailurePolicyRule
SuccessPolicy: 1 rules []SuccessPolicyRule
JobSchedulingConfiguration: 1 schedulingPolicy WorkloadPodGroupSchedulingPolicy,
  2 schedulingConstraints WorkloadPodGroupSchedulingConstraints, 3 disruptionMode WorkloadPodGroupDisruptionMode,
  4 resourceClaims []WorkloadPodGroupResourceClaim
JobCondition: 1 type string, 2 status string, 3 lastProbeTime Time, 4 lastTransitionTime Time, 5 reason string,
  6 message string
UncountedTerminatedPods: 1 succeeded []string, 2 failed []string
DeploymentStrategy: 1 type string, 2 rollingUpdate RollingUpdateDeployment
DeploymentCondition: 1 type string, 2 status string, 4 reason string, 5 message string, 6 lastUpdateTime Time,
  7 lastTransitionTime Time
PodFailurePolicyRule: 1 action string, 2 onExitCodes PodFailurePolicyOnExitCodesRequirement,
  3 onPodConditions []PodFailurePolicyOnPodConditionsPattern
SuccessPolicyRule: 1 succeededIndexes string, 2 succeededCount? int32
WorkloadPodGroupSchedulingPolicy: 1 basic WorkloadPodGroupBasicSchedulingPolicy,
  2 gang WorkloadPodGroupGangSchedulingPolicy
WorkloadPodGroupSchedulingConstraints: 1 topology []TopologyConstraint
WorkloadPodGroupDisruptionMode: 1 single WorkloadPodGroupSingleDisruptionMode,
  2 all WorkloadPodGroupAllDisruptionMode
WorkloadPodGroupResourceClaim: 1 name string, 2 resourceClaimName string, 3 resourceClaimTemplateName string
RollingUpdateDeployment: 1 maxUnavailable IntOrString, 2 maxSurge IntOrString
PodFailurePolicyOnExitCodesRequirement: 1 containerName? string, 2 operator string, 3 values []int32
PodFailurePolicyOnPodConditionsPattern: 1 type string, 2 status string
WorkloadPodGroupBasicSchedulingPolicy:
WorkloadPodGroupGangSchedulingPolicy: 1 minCount int32
TopologyConstraint: 1 key string
WorkloadPodGroupSingleDisruptionMode:
WorkloadPodGroupAllDisruptionMode:
`;
