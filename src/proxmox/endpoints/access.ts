/** `/access/*`: login tickets, users/groups/roles/domains, and what the caller may do. */
import { login } from '../auth/authenticate';
import { ROLES, ROLE_PRIVILEGES, capabilities, permissions } from '../auth/roles';
import { rbacBindings } from '@/server/domain/rbac-bindings';
import { accessAcl, accessGroups, accessUsers, type AccessUser } from '../access-view';
import { corral } from '../errors';
import { onlyParams } from '../qemu-params';
import { ProxmoxError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';

/** root@pam, the users the configured token grants name, the caller, and every User/ServiceAccount a binding names. */
async function users(ctx: EndpointContext): Promise<AccessUser[]> {
  const known = new Set(['root@pam']);
  for (const g of ctx.auth.grants) if (g.tokenId) known.add(g.tokenId.split('!')[0] ?? 'root@pam');
  known.add(ctx.principal.userid);
  return accessUsers(await corral(rbacBindings(ctx.state.services.deps)), [...known]);
}

export function registerAccess(table: Routes): void {
  define(table, 'GET', '/access', {
    handle: () => ['ticket', 'users', 'groups', 'roles', 'acl', 'domains', 'permissions'].map((subdir) => ({ subdir })),
  });
  // PVE's login form fetches this before posting; it is a no-op.
  define(table, 'GET', '/access/ticket', { public: true, handle: () => null });
  define(table, 'POST', '/access/ticket', {
    public: true,
    handle: (ctx) => {
      const result = login(ctx.auth, ctx.facts, {
        username: ctx.args.requireString('username'),
        password: ctx.args.string('password') ?? '',
        ...(ctx.args.string('realm') ? { realm: ctx.args.string('realm') } : {}),
      });
      return {
        username: result.username,
        ticket: result.ticket,
        CSRFPreventionToken: result.CSRFPreventionToken,
        cap: capabilities(result.role),
        clustername: ctx.state.services.cluster.info.name || 'corral',
      };
    },
  });
  define(table, 'GET', '/access/users', {
    handle: async (ctx) => {
      onlyParams(ctx.args, ['enabled', 'full']);
      // Every listed user is enabled: `enabled=0` (only disabled users) lists none.
      return ctx.args.bool('enabled') === false ? [] : await users(ctx);
    },
  });
  define(table, 'GET', '/access/users/{userid}', {
    handle: async (ctx) => {
      const userid = ctx.path.userid ?? '';
      const user = (await users(ctx)).find((u) => u.userid === userid);
      if (!user) throw new ProxmoxError(404, `no such user ('${userid}')`);
      const { userid: _id, realm: _realm, groups, ...rest } = user;
      return { ...rest, groups: groups ? groups.split(',') : [] };
    },
  });
  define(table, 'GET', '/access/groups', {
    handle: async (ctx) => accessGroups(await corral(rbacBindings(ctx.state.services.deps))),
  });
  define(table, 'GET', '/access/groups/{groupid}', {
    handle: async (ctx) => {
      const groupid = ctx.path.groupid ?? '';
      const group = accessGroups(await corral(rbacBindings(ctx.state.services.deps))).find(
        (g) => g.groupid === groupid,
      );
      if (!group) throw new ProxmoxError(404, `group '${groupid}' does not exist`);
      return { comment: group.comment, members: group.users ? group.users.split(',') : [] };
    },
  });
  define(table, 'GET', '/access/acl', {
    handle: async (ctx) => {
      const bindings = await corral(rbacBindings(ctx.state.services.deps));
      return accessAcl(bindings, (namespace) => [
        ...ctx.state
          .vmRowsWithIds()
          .filter((v) => v.row.namespace === namespace)
          .map((v) => v.vmid),
        ...ctx.state
          .ctsWithIds()
          .filter((c) => c.ref.namespace === namespace)
          .map((c) => c.vmid),
      ]);
    },
  });
  define(table, 'GET', '/access/roles', {
    handle: () => ROLES.map((roleid) => ({ roleid, privs: ROLE_PRIVILEGES[roleid].join(','), special: 1 })),
  });
  define(table, 'GET', '/access/domains', {
    handle: () => [
      { realm: 'pam', type: 'pam', comment: 'Linux PAM standard authentication' },
      { realm: 'pve', type: 'pve', comment: 'Proxmox VE authentication server' },
      { realm: 'k8s', type: 'k8s', comment: 'Kubernetes users named in RoleBindings and ClusterRoleBindings' },
      { realm: 'sa', type: 'sa', comment: 'Kubernetes ServiceAccounts named in RoleBindings and ClusterRoleBindings' },
    ],
  });
  define(table, 'GET', '/access/permissions', { handle: (ctx) => permissions(ctx.principal.role) });
}
