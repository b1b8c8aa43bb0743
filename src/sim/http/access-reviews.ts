/**
 * `authorization.k8s.io/v1 selfsubjectaccessreviews` (kubectl auth can-i) and `authentication.k8s.io/v1
 * selfsubjectreviews` (kubectl auth whoami): create-only virtual resources. The kubeconfig's admin may do anything;
 * a ServiceAccount token is answered from the cluster's RBAC objects, the same rules its requests are held to
 * (rbac.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { allowed, type ResourceAttributes, type SimUser } from './rbac.js';
import { isPlainObject, isProtobufBody, notFoundPath, parseJson, readBody, sendJson } from './wire.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** The review's resourceAttributes as RBAC reads them; undefined when they are not an object of strings. */
function attributesOf(spec: Record<string, unknown>): ResourceAttributes | undefined {
  const raw = spec.resourceAttributes;
  if (!isPlainObject(raw)) return undefined;
  const text = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : '');
  return {
    verb: text('verb'),
    group: text('group'),
    resource: text('resource'),
    ...(text('subresource') ? { subresource: text('subresource') } : {}),
    ...(text('namespace') ? { namespace: text('namespace') } : {}),
    ...(text('name') ? { name: text('name') } : {}),
  };
}

function decision(store: ObjectStore, user: SimUser, spec: Record<string, unknown>, protobuf: boolean) {
  if (user.admin) return { allowed: true, reason: 'the kubeconfig admin (system:masters) may do anything' };
  if (protobuf)
    return {
      allowed: false,
      evaluationError: 'the embedded cluster does not decode protobuf access reviews of a ServiceAccount: send JSON',
    };
  const attrs = attributesOf(spec);
  // Non-resource URLs (discovery, /version, /healthz) are open to every authenticated caller here.
  if (!attrs) return { allowed: true, reason: 'non-resource URLs are open to authenticated callers' };
  return allowed(store, user, attrs)
    ? { allowed: true, reason: `RBAC: allowed for "${user.username}"` }
    : { allowed: false };
}

export const REVIEW_RESOURCES: Record<string, { plural: string; kind: string }> = {
  [AUTHORIZATION_GROUP]: { plural: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  [AUTHENTICATION_GROUP]: { plural: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
};

export async function serveReview(
  req: IncomingMessage,
  res: ServerResponse,
  group: string,
  version: string,
  rest: string[],
  who: { store: ObjectStore; user: SimUser },
): Promise<void> {
  const resource = REVIEW_RESOURCES[group];
  if (!resource || version !== 'v1' || rest.length !== 1 || rest[0] !== resource.plural) throw notFoundPath();
  if (req.method !== 'POST')
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const text = await readBody(req);
  // kubectl auth can-i / whoami send protobuf, which is not decoded here: for the admin the answer does not depend
  // on it (everything is allowed), so the review is answered without its spec.
  const protobuf = isProtobufBody(req);
  const body = protobuf ? { spec: { resourceAttributes: {} } } : text.trim() ? parseJson(text) : undefined;
  if (!isPlainObject(body)) throw badRequest(`${resource.kind} body must be a JSON object`);
  const meta = { creationTimestamp: null };
  if (group === AUTHORIZATION_GROUP) {
    if (
      !isPlainObject(body.spec) ||
      (!isPlainObject(body.spec.resourceAttributes) && !isPlainObject(body.spec.nonResourceAttributes))
    ) {
      throw new ApiError(
        422,
        'Invalid',
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        {
          kind: 'SelfSubjectAccessReview',
          group,
          causes: [
            {
              reason: 'FieldValueInvalid',
              field: 'spec.resourceAttributes',
              message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
            },
          ],
        },
      );
    }
    return sendJson(res, 201, {
      kind: resource.kind,
      apiVersion: `${group}/v1`,
      metadata: meta,
      spec: body.spec,
      status: decision(who.store, who.user, body.spec, protobuf),
    });
  }
  return sendJson(res, 201, {
    kind: resource.kind,
    apiVersion: `${group}/v1`,
    metadata: meta,
    status: { userInfo: { username: who.user.username, groups: who.user.groups } },
  });
}
