/**
 * `authorization.k8s.io/v1 selfsubjectaccessreviews` (kubectl auth can-i) and `authentication.k8s.io/v1
 * selfsubjectreviews` (kubectl auth whoami): create-only virtual resources. The embedded cluster does not enforce
 * RBAC, so every access review is allowed and every caller is the kubeconfig's admin user.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';
import { isPlainObject, isProtobufBody, notFoundPath, parseJson, readBody, sendJson } from './wire.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

export const SIM_USER = { username: 'corral-sim-admin', groups: ['system:masters', 'system:authenticated'] };

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
): Promise<void> {
  const resource = REVIEW_RESOURCES[group];
  if (!resource || version !== 'v1' || rest.length !== 1 || rest[0] !== resource.plural) throw notFoundPath();
  if (req.method !== 'POST')
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const text = await readBody(req);
  // kubectl auth can-i / whoami send protobuf, which is not decoded here: the answer does not depend on it
  // (everything is allowed, the caller is always the admin), so the review is answered without its spec.
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
      status: { allowed: true, reason: 'the embedded cluster does not enforce RBAC' },
    });
  }
  return sendJson(res, 201, {
    kind: resource.kind,
    apiVersion: `${group}/v1`,
    metadata: meta,
    status: { userInfo: SIM_USER },
  });
}
