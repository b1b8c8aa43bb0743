/**
 * Protobuf field descriptors: k8s.io/apimachinery/pkg/apis/meta/v1: ObjectMeta and what it holds, label selectors, conditions, DeleteOptions.
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const META = `
DeleteOptions: 1 gracePeriodSeconds? int64, 2 preconditions Preconditions, 3 orphanDependents? bool,
  4 propagationPolicy? string, 5 dryRun []string, 6 ignoreStoreReadErrorWithClusterBreakingPotential? bool
ObjectMeta: 1 name string, 2 generateName string, 3 namespace string, 4 selfLink string, 5 uid string,
  6 resourceVersion string, 7 generation int64, 8 creationTimestamp Time, 9 deletionTimestamp Time,
  10 deletionGracePeriodSeconds? int64, 11 labels {}string, 12 annotations {}string,
  13 ownerReferences []OwnerReference, 14 finalizers []string, 17 managedFields []ManagedFieldsEntry
Preconditions: 1 uid? string, 2 resourceVersion? string
ListMeta: 1 selfLink string, 2 resourceVersion string, 3 continue string, 4 remainingItemCount? int64,
  5 shardInfo ShardInfo
ShardInfo: 1 selector string
OwnerReference: 1 kind string, 3 name string, 4 uid string, 5 apiVersion string, 6 controller? bool,
  7 blockOwnerDeletion? bool
ManagedFieldsEntry: 1 manager string, 2 operation string, 3 apiVersion string, 4 time Time, 6 fieldsType string,
  7 fieldsV1 FieldsV1, 8 subresource string
Condition: 1 type string, 2 status string, 3 observedGeneration int64, 4 lastTransitionTime Time, 5 reason string,
  6 message string
LabelSelector: 1 matchLabels {}string, 2 matchExpressions []LabelSelectorRequirement
LabelSelectorRequirement: 1 key string, 2 operator string, 3 values []string
`;
