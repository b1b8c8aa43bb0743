import { z } from 'zod';
import { DiskSize, InCluster, K8sName, Namespace, textUpTo } from './common';

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

// --- custom sources (api.md "Image library & catalog") ---------------------------------------------------------

export const SourceKind = z.enum(['containerDisk', 'url', 'iso']);
export type SourceKind = z.infer<typeof SourceKind>;

/**
 * An OCI image reference as registries accept it: `[host[:port]/]path[:tag][@sha256:…]`, lower-case path
 * components separated by `/`, `.`, `_` or `-` (the distribution/reference grammar, without the uncommon forms).
 */
export const IMAGE_REFERENCE =
  /^(?:[a-z0-9]([a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

export const ImageReference = z
  .string()
  .min(1, 'must not be empty')
  .max(512, 'must be at most 512 characters')
  .regex(IMAGE_REFERENCE, 'must be an image reference like quay.io/containerdisks/fedora:42');

/** An http(s) URL of something a CDI importer downloads; no other scheme (file://, ftp://, docker://). */
export const HttpUrl = z
  .string()
  .min(1, 'must not be empty')
  .max(2048, 'must be at most 2048 characters')
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL');

export const SourceInput = z
  .strictObject({
    name: K8sName.describe('DNS-1123 label; a new entry or the one it replaces'),
    kind: SourceKind.describe('containerDisk boots directly; url is a qcow2/raw CDI import; iso an installer ISO'),
    uri: z.string().max(2048, 'must be at most 2048 characters'),
    description: textUpTo(200).optional(),
    ...InCluster,
  })
  .superRefine((v, ctx) => {
    const check = v.kind === 'containerDisk' ? ImageReference : HttpUrl;
    const result = check.safeParse(v.uri);
    if (!result.success) {
      const message = result.error.issues[0]?.message ?? 'invalid';
      ctx.addIssue({
        code: 'custom',
        path: ['uri'],
        message: `${message} (kind ${v.kind})`,
      });
    }
  });
export type SourceInput = z.infer<typeof SourceInput>;

export const SourceNameInput = z.strictObject({ name: K8sName, ...InCluster });
export const SourceSaved = z.object({ status: z.literal('ok'), name: z.string() });
export const SourceRemoved = z.object({ status: z.literal('removed') });

// --- imported images (CDI DataVolumes) --------------------------------------------------------------------------

export const DataVolumeRow = z.object({
  name: z.string(),
  namespace: z.string(),
  size: z.string().describe('requested size (spec.storage / spec.pvc)'),
  phase: z.string().describe("CDI's status.phase as is (Pending, ImportScheduled, ImportInProgress, Succeeded, …)"),
  progress: z.number().nullable().describe('percent 0–100 from status.progress; null while CDI reports N/A'),
  source: z.string().describe('the import URL, docker:// reference, "upload" or "blank"'),
  contentType: z.enum(['disk', 'iso']).describe('iso when imported as install media'),
  error: z.string().describe('why the importer is failing (Running condition message), "" when it is not'),
  restarts: z.number().int().describe("the importer pod's restart count"),
  createdAt: z.string(),
});
export type DataVolumeRow = z.infer<typeof DataVolumeRow>;

export const DataVolumeCreateInput = z
  .strictObject({
    name: K8sName,
    namespace: Namespace.optional().describe('defaults to tailvm (CORRAL_NAMESPACE)'),
    url: HttpUrl.optional().describe('http(s) URL of a qcow2/raw image or ISO'),
    registry: ImageReference.optional().describe('containerdisk image reference (imported with docker://)'),
    size: DiskSize.describe('1Gi – 64Ti; must hold the image'),
    contentType: z.enum(['disk', 'iso']).optional().describe('default: iso when the URL ends in .iso, else disk'),
    ...InCluster,
  })
  .superRefine((v, ctx) => {
    if ((v.url === undefined) === (v.registry === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'exactly one of url and registry is required' });
    }
  });
export type DataVolumeCreateInput = z.infer<typeof DataVolumeCreateInput>;

export const DataVolumeCreated = z.object({
  name: z.string(),
  namespace: z.string(),
  task: z.string().describe('the import task; poll GET /api/tasks/{id}'),
});
export const DataVolumeDeleted = z.object({ status: z.literal('deleted'), task: z.string() });
