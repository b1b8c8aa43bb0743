/** Extensions (plugins): api.md "GET /api/plugins", "POST /api/plugins/{name}/install", "DELETE /api/plugins/{name}". */
import { z } from 'zod';
import { InCluster } from './common';

export const ExtensionName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9-]+$/, 'must be an extension name such as bootc')
  .describe('extension name from GET /api/plugins');

export const ExtensionRef = z.strictObject({ name: ExtensionName, ...InCluster });

export const ExtensionRow = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string().describe('the version this Corral ships'),
  installed: z.boolean(),
  inStore: z.boolean().describe('false for an installed extension this Corral no longer ships'),
  installedVersion: z.string().optional(),
  installedAt: z.string().optional(),
  installs: z.array(z.string()).describe('what install applies, one line per object'),
  needs: z.array(z.string()).describe('what it needs from the cluster'),
});
export type ExtensionRow = z.infer<typeof ExtensionRow>;

export const ExtensionInstalled = z.object({
  installed: z.string(),
  applied: z.array(z.string()).describe('each object applied (server-side apply, field manager corral)'),
  task: z.string().describe('the task whose log lists the same'),
});

export const ExtensionRemoved = z.object({
  status: z.literal('removed'),
  removed: z.array(z.string()).describe('each object deleted (those carrying corral.dev/extension=<name>)'),
  left: z.array(z.string()).describe('objects of the extension left alone because they lost the label (hand edits)'),
  task: z.string(),
});
