/** The served clusters (kube contexts) and their health: `GET /api/contexts`, the tree's top level. */
import { z } from 'zod';

export const ClusterStatus = z.object({
  context: z.string().describe('the kube context name; rows, routes and pool refs name the cluster by it'),
  name: z.string().describe('the kubeconfig\'s cluster name, or "embedded demo cluster"'),
  server: z.string().describe('the API server URL'),
  demo: z.boolean().describe('an embedded (simulated) cluster'),
  default: z.boolean().describe('the cluster requests without `context` act on (the first configured)'),
  ready: z
    .boolean()
    .describe('false while the cluster does not answer: its rows are the last known state, marked stale'),
  problems: z.array(z.string()).describe('why it is not ready; empty when ready'),
});
export type ClusterStatus = z.infer<typeof ClusterStatus>;
