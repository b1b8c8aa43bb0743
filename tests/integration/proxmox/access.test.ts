/**
 * `/access/users|groups|acl` derived from the cluster's RoleBindings and ClusterRoleBindings (created here in the
 * embedded apiserver), in the shapes Ansible's proxmox_user_info and proxmox_group_info read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;

async function kube(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${h.sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  const created = await api.post('/nodes/corral-1/qemu', { vmid: 810, name: 'acl-vm', memory: 512 });
  expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await kube(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'ops-admins' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [
      { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' },
      { kind: 'Group', name: 'platform:oncall', apiGroup: 'rbac.authorization.k8s.io' },
    ],
  });
  await kube(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'sa-readers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'Group', name: 'system:serviceaccounts:tailvm', apiGroup: 'rbac.authorization.k8s.io' }],
  });
  await kube(`${rbac}/namespaces/tailvm/rolebindings`, {
    metadata: { name: 'vm-editors', namespace: 'tailvm' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubevirt.io:edit' },
    subjects: [
      { kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' },
      { kind: 'ServiceAccount', name: 'ci-bot', namespace: 'tailvm' },
    ],
  });
  await kube(`${rbac}/namespaces/tailvm/rolebindings`, {
    metadata: { name: 'pod-logs', namespace: 'tailvm' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'log-reader' },
    subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }],
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('access from RBAC', () => {
  it('/access/users: root@pam plus every User (@k8s) and ServiceAccount (@sa) a binding names', async () => {
    const users = (await api.get('/access/users', { full: 1 })).body.data as Record<string, unknown>[];
    const byId = new Map(users.map((u) => [u.userid as string, u]));
    expect(byId.get('root@pam')).toMatchObject({ enable: 1, expire: 0, 'realm-type': 'pam' });
    expect(byId.get('alice@k8s')).toMatchObject({ enable: 1, 'realm-type': 'k8s', comment: 'Kubernetes user alice' });
    expect(byId.get('bob@k8s')).toMatchObject({ enable: 1 });
    // carol's role (a Role of her own) is no PVE role: she is a user, but without an ACL entry.
    expect(byId.get('carol@k8s')).toBeDefined();
    expect(byId.get('ci-bot@sa')).toMatchObject({
      'realm-type': 'sa',
      comment: 'ServiceAccount tailvm/ci-bot',
      groups: 'system-serviceaccounts-tailvm',
    });
    const one = await api.get('/access/users/ci-bot@sa');
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ enable: 1, groups: ['system-serviceaccounts-tailvm'] });
    const none = await api.get('/access/users/mallory@k8s');
    expect([none.status, none.reason]).toEqual([404, "no such user ('mallory@k8s')"]);
    expect((await api.get('/access/users', { enabled: 0 })).body.data).toEqual([]);
  });

  it('/access/groups: the Group subjects, with the ServiceAccounts Kubernetes puts in them', async () => {
    const groups = (await api.get('/access/groups')).body.data as { groupid: string; comment: string; users: string }[];
    expect(groups).toEqual(
      expect.arrayContaining([
        { groupid: 'platform-oncall', comment: 'Kubernetes group platform:oncall', users: '' },
        {
          groupid: 'system-serviceaccounts-tailvm',
          comment: 'Kubernetes group system:serviceaccounts:tailvm',
          users: 'ci-bot@sa',
        },
      ]),
    );
    expect((await api.get('/access/groups/system-serviceaccounts-tailvm')).body.data).toEqual({
      comment: 'Kubernetes group system:serviceaccounts:tailvm',
      members: ['ci-bot@sa'],
    });
    expect((await api.get('/access/groups/nobody')).status).toBe(404);
  });

  it('/access/acl: a ClusterRoleBinding on /, a RoleBinding on each guest of its namespace', async () => {
    const acl = (await api.get('/access/acl')).body.data as Record<string, unknown>[];
    expect(acl).toEqual(
      expect.arrayContaining([
        { path: '/', roleid: 'Administrator', type: 'user', ugid: 'alice@k8s', propagate: 1 },
        { path: '/', roleid: 'Administrator', type: 'group', ugid: 'platform-oncall', propagate: 1 },
        { path: '/', roleid: 'Viewer', type: 'group', ugid: 'system-serviceaccounts-tailvm', propagate: 1 },
        { path: '/vms/810', roleid: 'Operator', type: 'user', ugid: 'bob@k8s', propagate: 1 },
        { path: '/vms/810', roleid: 'Operator', type: 'user', ugid: 'ci-bot@sa', propagate: 1 },
      ]),
    );
    expect(acl.some((e) => e.ugid === 'carol@k8s')).toBe(false);
    const domains = ((await api.get('/access/domains')).body.data as { realm: string }[]).map((d) => d.realm);
    expect(domains).toEqual(expect.arrayContaining(['pam', 'pve', 'k8s', 'sa']));
  });
});
