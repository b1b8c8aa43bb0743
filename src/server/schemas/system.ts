import { z } from 'zod';
import { Blocker } from './doctor';

export const WhoAmI = z.object({
  login: z.string(),
  name: z.string(),
  admin: z.boolean(),
  enforced: z.boolean().describe('true when CORRAL_ADMINS is set'),
  readOnlyReason: z
    .string()
    .optional()
    .describe('why a caller is read-only when CORRAL_ADMINS did not decide it (a remote caller of an exposed server)'),
  demo: z.boolean().describe('true against the embedded demo cluster'),
  cluster: z.string(),
});

export const Capabilities = z.object({
  storageClass: z.string().describe('default StorageClass for new VM disks, "" when none'),
  canExpand: z.boolean(),
  canSnapshot: z.boolean(),
  bootc: z
    .boolean()
    .describe('a bootc source can be built here: CDI served, an amd64/arm64 node ready, privileged pods allowed'),
  bootcWhyNot: z.array(z.string()).describe('why bootc is false, one reason each; [] when it is true'),
  blocked: z
    .array(Blocker)
    .describe(
      'Corral features a failing doctor check (or a warning that leaves one unusable: metrics-server, multus, volume-expansion) turns off, each with the check that explains it (GET /api/doctor)',
    ),
  demo: z.boolean().describe('true: this is the embedded demo cluster, not a real one'),
  cluster: z.string(),
  context: z.string(),
  contexts: z.array(z.string()).describe('every context in the kubeconfig; restart with --context NAME to switch'),
  defaultNamespace: z.string(),
});

export const InstanceTypes = z.object({ instancetypes: z.array(z.string()), preferences: z.array(z.string()) });
