/**
 * `authorization.k8s.io/v1 selfsubjectaccessreviews` (kubectl auth can-i), `selfsubjectrulesreviews` (kubectl auth
 * can-i --list: every rule the caller holds in a namespace) and `authentication.k8s.io/v1 selfsubjectreviews`
 * (kubectl auth whoami): create-only virtual resources. The kubeconfig's admin may do anything;
 * a ServiceAccount token is answered from the cluster's RBAC objects, the same rules its requests are held to
 * (rbac.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { allowed, rulesFor, type ResourceAttributes, type SimUser } from './rbac.js';
import { decodeObject } from '../proto/envelope.js';
import { MESSAGES } from '../proto/schema.js';
import { ProtoError } from '../proto/wire.js';
import { isPlainObject, isProtobufBody, notFoundPath, parseJson, readBodyBytes, sendJson } from './wire.js';

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

function decision(store: ObjectStore, user: SimUser, spec: Record<string, unknown>) {
  if (user.admin) return { allowed: true, reason: 'the kubeconfig admin (system:masters) may do anything' };
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

/** The second review of the authorization group (served beside REVIEW_RESOURCES' access review). */
export const RULES_REVIEW = { plural: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' };

export async function serveReview(
  req: IncomingMessage,
  res: ServerResponse,
  group: string,
  version: string,
  rest: string[],
  who: { store: ObjectStore; user: SimUser },
): Promise<void> {
  const rulesReview = group === AUTHORIZATION_GROUP && rest.length === 1 && rest[0] === RULES_REVIEW.plural;
  const resource = rulesReview ? RULES_REVIEW : REVIEW_RESOURCES[group];
  if (!resource || version !== 'v1' || rest.length !== 1 || rest[0] !== resource.plural) throw notFoundPath();
  if (req.method !== 'POST')
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  const bytes = await readBodyBytes(req);
  // kubectl auth can-i / whoami send protobuf. A SelfSubjectAccessReview is decoded like any built-in body; a
  // SelfSubjectReview has nothing to read (no spec), so its body is not.
  let body: unknown;
  if (!isProtobufBody(req)) body = bytes.toString('utf8').trim() ? parseJson(bytes.toString('utf8')) : undefined;
  else if (group !== AUTHORIZATION_GROUP) body = {};
  else if (rulesReview) throw badRequest('SelfSubjectRulesReview: send JSON (protobuf is not decoded here)');
  else {
    try {
      body = decodeObject(bytes, MESSAGES.get('SelfSubjectAccessReview')!);
    } catch (err) {
      if (err instanceof ProtoError) throw badRequest(`error decoding protobuf request body: ${err.message}`);
      throw err;
    }
  }
  if (!isPlainObject(body)) throw badRequest(`${resource.kind} body must be a JSON object`);
  const meta = { creationTimestamp: null };
  if (rulesReview) {
    const spec = isPlainObject(body.spec) ? body.spec : {};
    const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
    return sendJson(res, 201, {
      kind: resource.kind,
      apiVersion: `${group}/v1`,
      metadata: meta,
      spec: { namespace },
      status: {
        resourceRules: rulesFor(who.store, who.user, namespace).map((r) => ({
          verbs: r.verbs ?? [],
          ...(r.apiGroups ? { apiGroups: r.apiGroups } : {}),
          ...(r.resources ? { resources: r.resources } : {}),
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        })),
        // Discovery, /version and health are open to every caller here (rbac.ts).
        nonResourceRules: [
          {
            verbs: ['get'],
            nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version', '/healthz', '/livez', '/readyz'],
          },
        ],
        incomplete: false,
      },
    });
  }
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
      status: decision(who.store, who.user, body.spec),
    });
  }
  return sendJson(res, 201, {
    kind: resource.kind,
    apiVersion: `${group}/v1`,
    metadata: meta,
    status: { userInfo: { username: who.user.username, groups: who.user.groups } },
  });
}
