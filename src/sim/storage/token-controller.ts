/**
 * The legacy ServiceAccount token controller: a `kubernetes.io/service-account-token` Secret annotated
 * `kubernetes.io/service-account.name` gets `data.token` (plus `ca.crt` and `namespace`) once its ServiceAccount
 * exists, and the ServiceAccount's uid in `kubernetes.io/service-account.uid`. The apiserver's RBAC (http/rbac.ts)
 * authenticates that token as the ServiceAccount, and the kubelet hands it to the pods that run as it (the stand-in
 * for the projected token a real kubelet mounts).
 */
import { randomBytes } from 'node:crypto';
import { S } from './keys.js';
import type { Runtime } from './runtime.js';
import { rec } from './util.js';

const TYPE = 'kubernetes.io/service-account-token';
const SA_NAME = 'kubernetes.io/service-account.name';
const SA_UID = 'kubernetes.io/service-account.uid';

export function startTokenController(rt: Runtime): void {
  if (!rt.serves(S.secrets) || !rt.serves(S.serviceAccounts)) return;
  const fill = (ns: string | undefined, name: string) =>
    rt.enqueue(`token:${ns ?? ''}/${name}`, () => {
      const secret = rt.get(S.secrets, ns, name);
      if (!secret || secret.type !== TYPE || secret.metadata.deletionTimestamp) return;
      if (rec(secret.data).token) return;
      const saName = secret.metadata.annotations?.[SA_NAME];
      const sa = saName ? rt.get(S.serviceAccounts, ns, saName) : undefined;
      if (!sa) return;
      const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
      rt.store.mutate(S.secrets, ns, name, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, [SA_UID]: sa.metadata.uid };
        o.data = {
          ...rec(o.data),
          token: b64(`sim-sa-${randomBytes(24).toString('hex')}`),
          namespace: b64(ns ?? 'default'),
          'ca.crt': b64('embedded cluster: plain HTTP, no CA'),
        };
      });
    });
  rt.on(S.secrets, (ev) => {
    if (ev.type !== 'DELETED') fill(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  rt.on(S.serviceAccounts, (ev) => {
    if (ev.type === 'DELETED') return;
    for (const secret of rt.list(S.secrets, ev.object.metadata.namespace))
      if (secret.metadata.annotations?.[SA_NAME] === ev.object.metadata.name)
        fill(secret.metadata.namespace, secret.metadata.name);
  });
  for (const secret of rt.list(S.secrets)) fill(secret.metadata.namespace, secret.metadata.name);
}
