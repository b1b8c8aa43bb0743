import { z } from 'zod';
import { ContextName, K8sSubdomain } from './common';
import { VmRow } from './vms';

export const NodeRow = z.object({
  context: z.string().describe('the kube context (cluster) the node belongs to'),
  name: z.string(),
  ready: z.boolean(),
  roles: z.string().describe('comma-separated node-role.kubernetes.io/<role> labels'),
  kubelet: z.string(),
  arch: z.string(),
  schedulable: z.boolean(),
  cpu: z.number().describe('allocatable CPUs'),
  memory: z.string().describe('allocatable memory as a Kubernetes quantity'),
  ip: z.string().describe('InternalIP, "" when unknown'),
  cpuVendor: z.string().describe('from cpu-vendor.node.kubevirt.io/<Vendor>, "" when unlabelled'),
  vms: z.number().describe('running VM instances placed here'),
});
export type NodeRow = z.infer<typeof NodeRow>;

export const NodeDetail = NodeRow.extend({ vmRows: z.array(VmRow) });
export const NodeNameInput = z.strictObject({ name: K8sSubdomain, context: ContextName.optional() });
