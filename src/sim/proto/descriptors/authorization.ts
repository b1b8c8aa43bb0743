/**
 * Protobuf field descriptors: k8s.io/api/authorization/v1 SelfSubjectAccessReview (`kubectl auth can-i` sends it in
 * protobuf). Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the
 * notation is read by `../schema.ts`.
 */
export const AUTHORIZATION = `
SelfSubjectAccessReview: 1 metadata ObjectMeta, 2 spec SelfSubjectAccessReviewSpec, 3 status SubjectAccessReviewStatus
SelfSubjectAccessReviewSpec: 1 resourceAttributes ResourceAttributes, 2 nonResourceAttributes NonResourceAttributes
SubjectAccessReviewStatus: 1 allowed bool, 2 reason string, 3 evaluationError string, 4 denied bool
ResourceAttributes: 1 namespace string, 2 verb string, 3 group string, 4 version string, 5 resource string,
  6 subresource string, 7 name string, 8 fieldSelector FieldSelectorAttributes, 9 labelSelector LabelSelectorAttributes
NonResourceAttributes: 1 path string, 2 verb string
FieldSelectorAttributes: 1 rawSelector string, 2 requirements []FieldSelectorRequirement
LabelSelectorAttributes: 1 rawSelector string, 2 requirements []LabelSelectorRequirement
FieldSelectorRequirement: 1 key string, 2 operator string, 3 values []string
`;
