/**
 * Protobuf field descriptors: k8s.io/api/rbac/v1 roles and bindings, k8s.io/api/storage/v1 StorageClass.
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const RBAC_STORAGE = `
StorageClass: 1 metadata ObjectMeta, 2 provisioner string, 3 parameters {}string, 4 reclaimPolicy? string,
  5 mountOptions []string, 6 allowVolumeExpansion? bool, 7 volumeBindingMode? string,
  8 allowedTopologies []TopologySelectorTerm
ClusterRole: 1 metadata ObjectMeta, 2 rules []PolicyRule, 3 aggregationRule AggregationRule
ClusterRoleBinding: 1 metadata ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef
Role: 1 metadata ObjectMeta, 2 rules []PolicyRule
RoleBinding: 1 metadata ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef
PolicyRule: 1 verbs []string, 2 apiGroups []string, 3 resources []string, 4 resourceNames []string,
  5 nonResourceURLs []string
AggregationRule: 1 clusterRoleSelectors []LabelSelector
Subject: 1 kind string, 2 apiGroup string, 3 name string, 4 namespace string
RoleRef: 1 apiGroup string, 2 kind string, 3 name string
`;
