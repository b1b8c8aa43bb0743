/** `/access/*`: login tickets, users/groups/roles/domains, and what the caller may do. */
import { login } from '../auth/authenticate';
import { ROLES, ROLE_PRIVILEGES, capabilities, permissions } from '../auth/roles';
import { define, type Routes } from './context';

export function registerAccess(table: Routes): void {
  define(table, 'GET', '/access', {
    handle: () => ['ticket', 'users', 'groups', 'roles', 'domains', 'permissions'].map((subdir) => ({ subdir })),
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
    handle: (ctx) => {
      const users = new Set(['root@pam']);
      for (const g of ctx.auth.grants) if (g.tokenId) users.add(g.tokenId.split('!')[0] ?? 'root@pam');
      users.add(ctx.principal.userid);
      return [...users]
        .sort()
        .map((userid) => ({ userid, enable: 1, expire: 0, realm: userid.split('@')[1] ?? 'pam' }));
    },
  });
  define(table, 'GET', '/access/groups', { handle: () => [] });
  define(table, 'GET', '/access/roles', {
    handle: () => ROLES.map((roleid) => ({ roleid, privs: ROLE_PRIVILEGES[roleid].join(','), special: 1 })),
  });
  define(table, 'GET', '/access/domains', {
    handle: () => [
      { realm: 'pam', type: 'pam', comment: 'Linux PAM standard authentication' },
      { realm: 'pve', type: 'pve', comment: 'Proxmox VE authentication server' },
    ],
  });
  define(table, 'GET', '/access/permissions', { handle: (ctx) => permissions(ctx.principal.role) });
}
