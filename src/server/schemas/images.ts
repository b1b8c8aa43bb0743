import { z } from 'zod';

export const ImageCategory = z.enum(['server', 'desktop', 'appliance']);

export const CatalogImage = z.object({
  name: z.string(),
  description: z.string(),
  containerDisk: z.string().describe('OCI containerdisk URI ("" for custom url/iso sources)'),
  defaultUser: z.string(),
  category: ImageCategory,
  logo: z.string().optional().describe('short logo key the UI maps to an icon'),
  custom: z.boolean().optional().describe('true for user-defined sources from ConfigMap corral-sources'),
  kind: z.enum(['containerDisk', 'url', 'iso']).optional().describe('custom sources only'),
  uri: z.string().optional().describe('custom sources only'),
});
export type CatalogImage = z.infer<typeof CatalogImage>;
