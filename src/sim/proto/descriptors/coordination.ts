/**
 * Protobuf field descriptors: k8s.io/api/coordination/v1 Lease (leader election, node heartbeats).
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. Every LeaseSpec field is a pointer in Go.
 */
export const COORDINATION = `
Lease: 1 metadata ObjectMeta, 2 spec LeaseSpec
LeaseSpec: 1 holderIdentity? string, 2 leaseDurationSeconds? int32, 3 acquireTime MicroTime, 4 renewTime MicroTime,
  5 leaseTransitions? int32, 6 strategy? string, 7 preferredHolder? string
`;
