/**
 * Shared primitives for every DTO: names, sizes, counts. One definition, one error message per rule.
 *
 * Input rules (docs/security.md "Strict input"): every input object is strict (an unknown field is a 400 naming it —
 * use `z.strictObject`), JSON bodies are never coerced (`"false"` is not a boolean), query-string numbers and
 * booleans are parsed explicitly (`queryInt`, `queryBool`), names are DNS-1123, sizes are bounded.
 * src/server/strict-input.test.ts walks every procedure and holds them to this.
 */
import { z } from 'zod';
import { normalizeSize, quantityToNumber } from '../domain/quantity';

/** A DNS-1123 label: what Kubernetes accepts as a namespace, and Corral as a VM name. */
export const K8sName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/,
    'must be a DNS-1123 label: lower-case letters, digits and dashes, starting and ending with a letter or digit',
  );

export const Namespace = K8sName;

/** A DNS-1123 subdomain: node, instancetype, StorageClass and other object names. */
export const K8sSubdomain = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
    'must be a DNS-1123 subdomain: lower-case letters, digits, dashes and dots',
  );

/** `4G`, `4Gi`, `512Mi`, `1.5T`: decimal suffixes are taken as their binary counterparts (see docs/server.md). */
const SIZE = /^\d{1,15}(\.\d{1,6})?(Ki|Mi|Gi|Ti|Pi|K|M|G|T|P|k)$/;
export const Quantity = z.string().regex(SIZE, 'must be a size like 4G or 4Gi (units K, M, G, T, P, Ki … Pi)');

/** A size between `min` and `max` (both like `64Mi`), as the cluster will read it once normalised. */
export function boundedSize(min: string, max: string) {
  const [lo, hi] = [quantityToNumber(min), quantityToNumber(max)];
  return Quantity.refine((q) => {
    if (!SIZE.test(q)) return true; // the format check above has said what is wrong
    const bytes = quantityToNumber(normalizeSize(q));
    return bytes >= lo && bytes <= hi;
  }, `must be between ${min} and ${max}`);
}

/** Guest memory: 64Mi – 4Ti. */
export const MemorySize = boundedSize('64Mi', '4Ti');
/** A disk: 1Gi – 64Ti. */
export const DiskSize = boundedSize('1Gi', '64Ti');

export const MAX_CPUS = 512;
export const CpuCount = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_CPUS, `must be at most ${MAX_CPUS}`);

/** A whole number from a query string (`?limit=5`) or a number over tRPC; `""`, `abc` and `1e3` are refused. */
export function queryInt(min: number, max: number) {
  return z
    .union(
      [
        z.number(),
        z
          .string()
          .regex(/^-?\d{1,15}$/, 'must be a whole number')
          .transform(Number),
      ],
      // A union's own message would be "Invalid input"; say what is wanted.
      { error: `must be a whole number from ${min} to ${max}` },
    )
    .pipe(
      z.number().int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
    );
}

/**
 * A boolean from a query string: true/false/1/0 (or a boolean over tRPC); anything else is refused, never truthy.
 * The closing pipe lets trpc-to-openapi take it as a query parameter (it refuses a bare union with a boolean).
 */
export const queryBool = z
  .union([
    z.boolean(),
    z
      .enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' })
      .transform((v) => v === 'true' || v === '1'),
  ])
  .pipe(z.boolean());

const utf8 = new TextEncoder();
/** Free text limited by its UTF-8 size (what the cluster stores), not by characters. */
export function textUpTo(maxBytes: number) {
  return z
    .string()
    .refine((v) => v.length <= maxBytes && utf8.encode(v).length <= maxBytes, `must be at most ${maxBytes} bytes`);
}

/**
 * Which served cluster (kube context) a request is about; absent means the first configured one, so single-cluster
 * clients never send it. An unknown name is a 404 naming it (trpc.ts selects the cluster before the procedure runs).
 */
export const ContextName = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be a kube context name: printable characters, no spaces')
  .describe('the kube context (cluster) to act on; default: the first one Corral serves');

/** Spread into an input schema whose procedure addresses something in one cluster (VM, node, image, extension…). */
export const InCluster = { context: ContextName.optional() };

/** The input of a procedure that takes nothing but the optional cluster: no other body fields or query parameters. */
export const NoInput = z.strictObject(InCluster).optional();

/** Path parameters identifying one VM, and the cluster it is on (default: the first). */
export const VmRef = z.strictObject({ namespace: Namespace, name: K8sName, ...InCluster });
export type VmRef = z.infer<typeof VmRef>;

export const StatusOk = z.object({ status: z.literal('ok') });
export const TaskAccepted = z.object({ task: z.string().describe('task id; poll GET /api/tasks/{id}') });
