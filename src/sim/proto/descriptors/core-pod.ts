/**
 * Protobuf field descriptors: k8s.io/api/core/v1: the Pod and everything its spec and status hold except volume sources (containers, probes, security contexts, affinity, statuses).
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const CORE_POD = `
Pod: 1 metadata ObjectMeta, 2 spec PodSpec, 3 status PodStatus
PodSpec: 1 volumes []Volume, 2 containers []Container, 3 restartPolicy string,
  4 terminationGracePeriodSeconds? int64, 5 activeDeadlineSeconds? int64, 6 dnsPolicy string,
  7 nodeSelector {}string, 8 serviceAccountName string, 9 serviceAccount string, 10 nodeName string,
  11 hostNetwork bool, 12 hostPID bool, 13 hostIPC bool, 14 securityContext PodSecurityContext,
  15 imagePullSecrets []LocalObjectReference, 16 hostname string, 17 subdomain string, 18 affinity Affinity,
  19 schedulerName string, 20 initContainers []Container, 21 automountServiceAccountToken? bool,
  22 tolerations []Toleration, 23 hostAliases []HostAlias, 24 priorityClassName string, 25 priority? int32,
  26 dnsConfig PodDNSConfig, 27 shareProcessNamespace? bool, 28 readinessGates []PodReadinessGate,
  29 runtimeClassName? string, 30 enableServiceLinks? bool, 31 preemptionPolicy? string, 32 overhead {}Quantity,
  33 topologySpreadConstraints []TopologySpreadConstraint, 34 ephemeralContainers []EphemeralContainer,
  35 setHostnameAsFQDN? bool, 36 os PodOS, 37 hostUsers? bool, 38 schedulingGates []PodSchedulingGate,
  39 resourceClaims []PodResourceClaim, 40 resources ResourceRequirements, 41 hostnameOverride? string,
  43 schedulingGroup PodSchedulingGroup, 44 evictionResponders []EvictionResponder
PodStatus: 1 phase string, 2 conditions []PodCondition, 3 message string, 4 reason string, 5 hostIP string,
  6 podIP string, 7 startTime Time, 8 containerStatuses []ContainerStatus, 9 qosClass string,
  10 initContainerStatuses []ContainerStatus, 11 nominatedNodeName string, 12 podIPs []PodIP,
  13 ephemeralContainerStatuses []ContainerStatus, 14 resize string,
  15 resourceClaimStatuses []PodResourceClaimStatus, 16 hostIPs []HostIP, 17 observedGeneration int64,
  18 extendedResourceClaimStatus PodExtendedResourceClaimStatus, 19 allocatedResources {}Quantity,
  20 resources ResourceRequirements, 21 nodeAllocatableResourceClaimStatuses []NodeAllocatableResourceClaimStatus,
  22 volumeHealth []PodVolumeHealth
LocalObjectReference: 1 name string
Container: 1 name string, 2 image string, 3 command []string, 4 args []string, 5 workingDir string,
  6 ports []ContainerPort, 7 env []EnvVar, 8 resources ResourceRequirements, 9 volumeMounts []VolumeMount,
  10 livenessProbe Probe, 11 readinessProbe Probe, 12 lifecycle Lifecycle, 13 terminationMessagePath string,
  14 imagePullPolicy string, 15 securityContext SecurityContext, 16 stdin bool, 17 stdinOnce bool, 18 tty bool,
  19 envFrom []EnvFromSource, 20 terminationMessagePolicy string, 21 volumeDevices []VolumeDevice,
  22 startupProbe Probe, 23 resizePolicy []ContainerResizePolicy, 24 restartPolicy? string,
  25 restartPolicyRules []ContainerRestartRule
EphemeralContainer: 1 ...ephemeralContainerCommon EphemeralContainerCommon, 2 targetContainerName string
PodSecurityContext: 1 seLinuxOptions SELinuxOptions, 2 runAsUser? int64, 3 runAsNonRoot? bool,
  4 supplementalGroups []int64, 5 fsGroup? int64, 6 runAsGroup? int64, 7 sysctls []Sysctl,
  8 windowsOptions WindowsSecurityContextOptions, 9 fsGroupChangePolicy? string, 10 seccompProfile SeccompProfile,
  11 appArmorProfile AppArmorProfile, 12 supplementalGroupsPolicy? string, 13 seLinuxChangePolicy? string
Affinity: 1 nodeAffinity NodeAffinity, 2 podAffinity PodAffinity, 3 podAntiAffinity PodAntiAffinity
Toleration: 1 key string, 2 operator string, 3 value string, 4 effect string, 5 tolerationSeconds? int64
HostAlias: 1 ip string, 2 hostnames []string
PodDNSConfig: 1 nameservers []string, 2 searches []string, 3 options []PodDNSConfigOption
PodReadinessGate: 1 conditionType string
TopologySpreadConstraint: 1 maxSkew int32, 2 topologyKey string, 3 whenUnsatisfiable string,
  4 labelSelector LabelSelector, 5 minDomains? int32, 6 nodeAffinityPolicy? string, 7 nodeTaintsPolicy? string,
  8 matchLabelKeys []string
PodOS: 1 name string
PodSchedulingGate: 1 name string
PodResourceClaim: 1 name string, 3 resourceClaimName? string, 4 resourceClaimTemplateName? string
ResourceRequirements: 1 limits {}Quantity, 2 requests {}Quantity, 3 claims []ResourceClaim
PodSchedulingGroup: 1 podGroupName? string
EvictionResponder: 1 name string, 2 priority? int32
PodCondition: 1 type string, 2 status string, 3 lastProbeTime Time, 4 lastTransitionTime Time, 5 reason string,
  6 message string, 7 observedGeneration int64
HostIP: 1 ip string
PodIP: 1 ip string
ContainerStatus: 1 name string, 2 state ContainerState, 3 lastState ContainerState, 4 ready bool,
  5 restartCount int32, 6 image string, 7 imageID string, 8 containerID string, 9 started? bool,
  10 allocatedResources {}Quantity, 11 resources ResourceRequirements, 12 volumeMounts []VolumeMountStatus,
  13 user ContainerUser, 14 allocatedResourcesStatus []ResourceStatus, 15 stopSignal? string
PodResourceClaimStatus: 1 name string, 2 resourceClaimName string
PodExtendedResourceClaimStatus: 1 requestMappings []ContainerExtendedResourceRequest, 2 resourceClaimName string
NodeAllocatableResourceClaimStatus: 1 resourceClaimName string, 2 containers []string,
  4 mapping []NodeAllocatableMappedResources, 5 overhead []NodeAllocatableOverheadResources
PodVolumeHealth: 1 name string, 2 healthConditions []VolumeHealthCondition, 3 lastTransitionTime Time
ContainerPort: 1 name string, 2 hostPort int32, 3 containerPort int32, 4 protocol string, 5 hostIP string
EnvFromSource: 1 prefix string, 2 configMapRef ConfigMapEnvSource, 3 secretRef SecretEnvSource
EnvVar: 1 name string, 2 value string, 3 valueFrom EnvVarSource
ContainerResizePolicy: 1 resourceName string, 2 restartPolicy string
ContainerRestartRule: 1 action string, 2 exitCodes ContainerRestartRuleOnExitCodes
VolumeMount: 1 name string, 2 readOnly bool, 3 mountPath string, 4 subPath string, 5 mountPropagation? string,
  6 subPathExpr string, 7 recursiveReadOnly? string, 8 bindMountOptions []string
VolumeDevice: 1 name string, 2 devicePath string
Probe: 1 ...handler ProbeHandler, 2 initialDelaySeconds int32, 3 timeoutSeconds int32, 4 periodSeconds int32,
  5 successThreshold int32, 6 failureThreshold int32, 7 terminationGracePeriodSeconds? int64
Lifecycle: 1 postStart LifecycleHandler, 2 preStop LifecycleHandler, 3 stopSignal? string
SecurityContext: 1 capabilities Capabilities, 2 privileged? bool, 3 seLinuxOptions SELinuxOptions,
  4 runAsUser? int64, 5 runAsNonRoot? bool, 6 readOnlyRootFilesystem? bool, 7 allowPrivilegeEscalation? bool,
  8 runAsGroup? int64, 9 procMount? string, 10 windowsOptions WindowsSecurityContextOptions,
  11 seccompProfile SeccompProfile, 12 appArmorProfile AppArmorProfile
EphemeralContainerCommon: 1 name string, 2 image string, 3 command []string, 4 args []string, 5 workingDir string,
  6 ports []ContainerPort, 7 env []EnvVar, 8 resources ResourceRequirements, 9 volumeMounts []VolumeMount,
  10 livenessProbe Probe, 11 readinessProbe Probe, 12 lifecycle Lifecycle, 13 terminationMessagePath string,
  14 imagePullPolicy string, 15 securityContext SecurityContext, 16 stdin bool, 17 stdinOnce bool, 18 tty bool,
  19 envFrom []EnvFromSource, 20 terminationMessagePolicy string, 21 volumeDevices []VolumeDevice,
  22 startupProbe Probe, 23 resizePolicy []ContainerResizePolicy, 24 restartPolicy? string,
  25 restartPolicyRules []ContainerRestartRule
SELinuxOptions: 1 user string, 2 role string, 3 type string, 4 level string
WindowsSecurityContextOptions: 1 gmsaCredentialSpecName? string, 2 gmsaCredentialSpec? string,
  3 runAsUserName? string, 4 hostProcess? bool
Sysctl: 1 name string, 2 value string
SeccompProfile: 1 type string, 2 localhostProfile? string
AppArmorProfile: 1 type string, 2 localhostProfile? string
NodeAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector,
  2 preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm
PodAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm,
  2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm
PodAntiAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm,
  2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm
PodDNSConfigOption: 1 name? string, 2 value? string
ResourceClaim: 1 name string, 2 request string
ContainerState: 1 waiting ContainerStateWaiting, 2 running ContainerStateRunning,
  3 terminated ContainerStateTerminated
VolumeMountStatus: 1 name string, 2 mountPath string, 3 readOnly bool, 4 recursiveReadOnly? string,
  5 ...volumeStatus VolumeStatus
ContainerUser: 1 linux LinuxContainerUser
ResourceStatus: 1 name string, 2 resources []ResourceHealth
ContainerExtendedResourceRequest: 1 containerName string, 2 resourceName string, 3 requestName string
NodeAllocatableMappedResources: 1 name string, 2 quantity Quantity
NodeAllocatableOverheadResources: 1 name string, 2 perPod Quantity, 3 perContainer Quantity
VolumeHealthCondition: 1 status string, 2 reason string, 3 message string
NodeSelector: 1 nodeSelectorTerms []NodeSelectorTerm
ConfigMapEnvSource: 1 ...localObjectReference LocalObjectReference, 2 optional? bool
SecretEnvSource: 1 ...localObjectReference LocalObjectReference, 2 optional? bool
EnvVarSource: 1 fieldRef ObjectFieldSelector, 2 resourceFieldRef ResourceFieldSelector,
  3 configMapKeyRef ConfigMapKeySelector, 4 secretKeyRef SecretKeySelector, 5 fileKeyRef FileKeySelector
ContainerRestartRuleOnExitCodes: 1 operator string, 2 values []int32
ProbeHandler: 1 exec ExecAction, 2 httpGet HTTPGetAction, 3 tcpSocket TCPSocketAction, 4 grpc GRPCAction
LifecycleHandler: 1 exec ExecAction, 2 httpGet HTTPGetAction, 3 tcpSocket TCPSocketAction, 4 sleep SleepAction
Capabilities: 1 add []string, 2 drop []string
PreferredSchedulingTerm: 1 weight int32, 2 preference NodeSelectorTerm
PodAffinityTerm: 1 labelSelector LabelSelector, 2 namespaces []string, 3 topologyKey string,
  4 namespaceSelector LabelSelector, 5 matchLabelKeys []string, 6 mismatchLabelKeys []string
WeightedPodAffinityTerm: 1 weight int32, 2 podAffinityTerm PodAffinityTerm
ContainerStateWaiting: 1 reason string, 2 message string
ContainerStateRunning: 1 startedAt Time
ContainerStateTerminated: 1 exitCode int32, 2 signal int32, 3 reason string, 4 message string, 5 startedAt Time,
  6 finishedAt Time, 7 containerID string
VolumeStatus: 1 image ImageVolumeStatus
LinuxContainerUser: 1 uid int64, 2 gid int64, 3 supplementalGroups []int64
ResourceHealth: 1 resourceID string, 2 health string, 6 message string
NodeSelectorTerm: 1 matchExpressions []NodeSelectorRequirement, 2 matchFields []NodeSelectorRequirement
ConfigMapKeySelector: 1 ...localObjectReference LocalObjectReference, 2 key string, 3 optional? bool
SecretKeySelector: 1 ...localObjectReference LocalObjectReference, 2 key string, 3 optional? bool
FileKeySelector: 1 volumeName string, 2 path string, 3 key string, 4 optional? bool
ExecAction: 1 command []string
HTTPGetAction: 1 path string, 2 port IntOrString, 3 host string, 4 scheme string, 5 httpHeaders []HTTPHeader,
  6 protocol string
TCPSocketAction: 1 port IntOrString, 2 host string
GRPCAction: 1 port int32, 2 service? string, 3 mode string
SleepAction: 1 seconds int64
ImageVolumeStatus: 1 imageRef string
NodeSelectorRequirement: 1 key string, 2 operator string, 3 values []string
HTTPHeader: 1 name string, 2 value string
`;
