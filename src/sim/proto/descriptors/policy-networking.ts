/**
 * Protobuf field descriptors: k8s.io/api/policy/v1 PodDisruptionBudget and k8s.io/api/networking/v1 NetworkPolicy
 * and Ingress (what Corral's own deploy/ manifests create). Field numbers and types from the published
 * `generated.proto` (../shared/reference/k8s-proto); the notation is read by `../schema.ts`.
 */
export const POLICY_NETWORKING = `
PodDisruptionBudget: 1 metadata ObjectMeta, 2 spec PodDisruptionBudgetSpec, 3 status PodDisruptionBudgetStatus
PodDisruptionBudgetSpec: 1 minAvailable? IntOrString, 2 selector LabelSelector, 3 maxUnavailable? IntOrString,
  4 unhealthyPodEvictionPolicy? string
PodDisruptionBudgetStatus: 1 observedGeneration int64, 2 disruptedPods {}Time, 3 disruptionsAllowed int32,
  4 currentHealthy int32, 5 desiredHealthy int32, 6 expectedPods int32, 7 conditions []Condition
NetworkPolicy: 1 metadata ObjectMeta, 2 spec NetworkPolicySpec
NetworkPolicySpec: 1 podSelector LabelSelector, 2 ingress []NetworkPolicyIngressRule,
  3 egress []NetworkPolicyEgressRule, 4 policyTypes []string
NetworkPolicyIngressRule: 1 ports []NetworkPolicyPort, 2 from []NetworkPolicyPeer
NetworkPolicyEgressRule: 1 ports []NetworkPolicyPort, 2 to []NetworkPolicyPeer
NetworkPolicyPeer: 1 podSelector LabelSelector, 2 namespaceSelector LabelSelector, 3 ipBlock IPBlock
NetworkPolicyPort: 1 protocol? string, 2 port? IntOrString, 3 endPort? int32
IPBlock: 1 cidr string, 2 except []string
Ingress: 1 metadata ObjectMeta, 2 spec IngressSpec, 3 status IngressStatus
IngressSpec: 1 defaultBackend IngressBackend, 2 tls []IngressTLS, 3 rules []IngressRule, 4 ingressClassName? string
IngressRule: 1 host string, 2 ...ingressRuleValue IngressRuleValue
IngressRuleValue: 1 http HTTPIngressRuleValue
HTTPIngressRuleValue: 1 paths []HTTPIngressPath
HTTPIngressPath: 1 path string, 2 backend IngressBackend, 3 pathType? string
IngressBackend: 3 resource TypedLocalObjectReference, 4 service IngressServiceBackend
IngressServiceBackend: 1 name string, 2 port ServiceBackendPort
ServiceBackendPort: 1 name string, 2 number int32
IngressTLS: 1 hosts []string, 2 secretName string
IngressStatus: 1 loadBalancer IngressLoadBalancerStatus
IngressLoadBalancerStatus: 1 ingress []IngressLoadBalancerIngress
IngressLoadBalancerIngress: 1 ip string, 2 hostname string, 4 ports []IngressPortStatus
IngressPortStatus: 1 port int32, 2 protocol string, 3 error? string
`;
