/**
 * The apiserver's error vocabulary. Every failure the store or a handler raises is an ApiError; the HTTP layer
 * renders it as a `Status` object with the same code and reason a real apiserver uses.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'TooManyRequests';

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason | string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `virtualmachines.kubevirt.io` or `configmaps` — how Kubernetes names a resource in messages. */
export function qualifiedResource(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export const notFound = (group: string, plural: string, name: string) =>
  new ApiError(404, 'NotFound', `${qualifiedResource(group, plural)} "${name}" not found`, {
    name,
    ...(group ? { group } : {}),
    kind: plural,
  });

export const alreadyExists = (group: string, plural: string, name: string) =>
  new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, plural)} "${name}" already exists`, {
    name,
    ...(group ? { group } : {}),
    kind: plural,
  });

export const conflict = (group: string, plural: string, name: string, why: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${why}`,
    { name, ...(group ? { group } : {}), kind: plural },
  );

export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 422 Invalid: `<Kind> "<name>" is invalid: <field>: <detail>` with one cause per field error. */
export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: { field: string; message: string; reason?: string }[],
): ApiError {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, {
    name,
    ...(group ? { group } : {}),
    kind,
    causes: causes.map((c) => ({ reason: c.reason ?? 'FieldValueInvalid', message: c.message, field: c.field })),
  });
}

export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);
