/**
 * Protobuf field descriptors: k8s.io/api/core/v1: the other served core kinds (Namespace, Node, Service, ConfigMap, Secret, PVC, PV, Event, ServiceAccount) and what they share with pods.
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const CORE = `
Namespace: 1 metadata ObjectMeta, 2 spec NamespaceSpec, 3 status NamespaceStatus
Node: 1 metadata ObjectMeta, 2 spec NodeSpec, 3 status NodeStatus
Service: 1 metadata ObjectMeta, 2 spec ServiceSpec, 3 status ServiceStatus
ConfigMap: 1 metadata ObjectMeta, 2 data {}string, 3 binaryData {}bytes, 4 immutable? bool
Secret: 1 metadata ObjectMeta, 2 data {}bytes, 3 type string, 4 stringData {}string, 5 immutable? bool
PersistentVolumeClaim: 1 metadata ObjectMeta, 2 spec PersistentVolumeClaimSpec, 3 status PersistentVolumeClaimStatus
PersistentVolume: 1 metadata ObjectMeta, 2 spec PersistentVolumeSpec, 3 status PersistentVolumeStatus
Event: 1 metadata ObjectMeta, 2 involvedObject ObjectReference, 3 reason string, 4 message string,
  5 source EventSource, 6 firstTimestamp Time, 7 lastTimestamp Time, 8 count int32, 9 type string,
  10 eventTime MicroTime, 11 series EventSeries, 12 action string, 13 related ObjectReference,
  14 reportingComponent string, 15 reportingInstance string
ServiceAccount: 1 metadata ObjectMeta, 2 secrets []ObjectReference, 3 imagePullSecrets []LocalObjectReference,
  4 automountServiceAccountToken? bool
NamespaceSpec: 1 finalizers []string
NamespaceStatus: 1 phase string, 2 conditions []NamespaceCondition
NodeSpec: 1 podCIDR string, 2 externalID string, 3 providerID string, 4 unschedulable bool, 5 taints []Taint,
  6 configSource NodeConfigSource, 7 podCIDRs []string, 8 podPreemptionPolicy NodePodPreemptionPolicy
NodeStatus: 1 capacity {}Quantity, 2 allocatable {}Quantity, 3 phase string, 4 conditions []NodeCondition,
  5 addresses []NodeAddress, 6 daemonEndpoints NodeDaemonEndpoints, 7 nodeInfo NodeSystemInfo,
  8 images []ContainerImage, 9 volumesInUse []string, 10 volumesAttached []AttachedVolume,
  11 config NodeConfigStatus, 12 runtimeHandlers []NodeRuntimeHandler, 13 features NodeFeatures,
  14 declaredFeatures []string
ServiceSpec: 1 ports []ServicePort, 2 selector {}string, 3 clusterIP string, 4 type string, 5 externalIPs []string,
  7 sessionAffinity string, 8 loadBalancerIP string, 9 loadBalancerSourceRanges []string, 10 externalName string,
  11 externalTrafficPolicy string, 12 healthCheckNodePort int32, 13 publishNotReadyAddresses bool,
  14 sessionAffinityConfig SessionAffinityConfig, 17 ipFamilyPolicy? string, 18 clusterIPs []string,
  19 ipFamilies []string, 20 allocateLoadBalancerNodePorts? bool, 21 loadBalancerClass? string,
  22 internalTrafficPolicy? string, 23 trafficDistribution? string
ServiceStatus: 1 loadBalancer LoadBalancerStatus, 2 conditions []Condition
PersistentVolumeClaimSpec: 1 accessModes []string, 2 resources VolumeResourceRequirements, 3 volumeName string,
  4 selector LabelSelector, 5 storageClassName? string, 6 volumeMode? string,
  7 dataSource TypedLocalObjectReference, 8 dataSourceRef TypedObjectReference, 9 volumeAttributesClassName? string
PersistentVolumeClaimStatus: 1 phase string, 2 accessModes []string, 3 capacity {}Quantity,
  4 conditions []PersistentVolumeClaimCondition, 5 allocatedResources {}Quantity,
  7 allocatedResourceStatuses {}string, 8 currentVolumeAttributesClassName? string,
  9 modifyVolumeStatus ModifyVolumeStatus, 10 healthStatus VolumeHealthStatus
PersistentVolumeStatus: 1 phase string, 2 message string, 3 reason string, 4 lastPhaseTransitionTime Time
ObjectReference: 1 kind string, 2 namespace string, 3 name string, 4 uid string, 5 apiVersion string,
  6 resourceVersion string, 7 fieldPath string
EventSource: 1 component string, 2 host string
EventSeries: 1 count int32, 2 lastObservedTime MicroTime
TopologySelectorTerm: 1 matchLabelExpressions []TopologySelectorLabelRequirement
NamespaceCondition: 1 type string, 2 status string, 4 lastTransitionTime Time, 5 reason string, 6 message string
Taint: 1 key string, 2 value string, 3 effect string, 4 timeAdded Time
NodeConfigSource: 2 configMap ConfigMapNodeConfigSource
NodePodPreemptionPolicy: 1 disableResizePreemption []string
NodeCondition: 1 type string, 2 status string, 3 lastHeartbeatTime Time, 4 lastTransitionTime Time, 5 reason string,
  6 message string
NodeAddress: 1 type string, 2 address string
NodeDaemonEndpoints: 1 kubeletEndpoint DaemonEndpoint
NodeSystemInfo: 1 machineID string, 2 systemUUID string, 3 bootID string, 4 kernelVersion string, 5 osImage string,
  6 containerRuntimeVersion string, 7 kubeletVersion string, 8 kubeProxyVersion string, 9 operatingSystem string,
  10 architecture string, 11 swap NodeSwapStatus
ContainerImage: 1 names []string, 2 sizeBytes int64
AttachedVolume: 1 name string, 2 devicePath string
NodeConfigStatus: 1 assigned NodeConfigSource, 2 active NodeConfigSource, 3 lastKnownGood NodeConfigSource,
  4 error string
NodeRuntimeHandler: 1 name string, 2 features NodeRuntimeHandlerFeatures
NodeFeatures: 1 supplementalGroupsPolicy? bool
ServicePort: 1 name string, 2 protocol string, 3 port int32, 4 targetPort IntOrString, 5 nodePort int32,
  6 appProtocol? string
SessionAffinityConfig: 1 clientIP ClientIPConfig
LoadBalancerStatus: 1 ingress []LoadBalancerIngress
VolumeResourceRequirements: 1 limits {}Quantity, 2 requests {}Quantity
TypedLocalObjectReference: 1 apiGroup? string, 2 kind string, 3 name string
TypedObjectReference: 1 apiGroup? string, 2 kind string, 3 name string, 4 namespace? string
PersistentVolumeClaimCondition: 1 type string, 2 status string, 3 lastProbeTime Time, 4 lastTransitionTime Time,
  5 reason string, 6 message string
ModifyVolumeStatus: 1 targetVolumeAttributesClassName string, 2 status string
VolumeHealthStatus: 1 healthConditions []VolumeHealthCondition, 2 lastTransitionTime Time
TopologySelectorLabelRequirement: 1 key string, 2 values []string
PodTemplateSpec: 1 metadata ObjectMeta, 2 spec PodSpec
ConfigMapNodeConfigSource: 1 namespace string, 2 name string, 3 uid string, 4 resourceVersion string,
  5 kubeletConfigKey string
DaemonEndpoint: 1 Port int32
NodeSwapStatus: 1 capacity? int64
NodeRuntimeHandlerFeatures: 1 recursiveReadOnlyMounts? bool, 2 userNamespaces? bool
ClientIPConfig: 1 timeoutSeconds? int32
LoadBalancerIngress: 1 ip string, 2 hostname string, 3 ipMode? string, 4 ports []PortStatus
PortStatus: 1 port int32, 2 protocol string, 3 error string
`;
