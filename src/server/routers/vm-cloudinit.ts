/**
 * A VM's cloud-init (api.md "Cloud-init"): read the settings and what is pending, change them, regenerate the image,
 * and show the generated text — the same domain (vm-cloudinit.ts) the Proxmox `ciuser`/`ipconfigN`/… keys use.
 */
import { CorralError } from '../errors';
import {
  CloudInitFieldError,
  MASKED_PASSWORD,
  dumpCloudInit,
  readCloudInit,
  regenerateCloudInit,
  setCloudInit,
  type CloudInitChange,
  type IpConfig,
} from '../domain/vm-cloudinit';
import { vmiActive } from '../domain/vm-facts';
import { VmRef } from '../schemas/common';
import {
  CloudInitDump,
  CloudInitDumpInput,
  CloudInitOutput,
  CloudInitSetInput,
  CloudInitTask,
} from '../schemas/vm-cloudinit';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['cloud-init'];
const vm = '/vms/{namespace}/{name}/cloudinit';

/** The domain names fields as Proxmox does; a REST caller sent these names. */
const REST_FIELD: Record<string, string> = {
  ciuser: 'user',
  cipassword: 'password',
  sshkeys: 'sshKeys',
  nameserver: 'nameservers',
  searchdomain: 'searchDomains',
  cicustom: 'custom',
  citype: 'type',
  delete: 'drive',
};

async function restErrors<T>(op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch (err) {
    if (!(err instanceof CloudInitFieldError)) throw err;
    const nic = /^ipconfig(\d+)$/.exec(err.field)?.[1];
    const field = nic !== undefined ? `ipConfigs (nic ${nic})` : (REST_FIELD[err.field] ?? err.field);
    throw new CorralError('BAD_REQUEST', `${field}: ${err.reason}`);
  }
}

export const cloudInitRouter = router({
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: vm,
        tags,
        summary: 'Cloud-init settings (never the password), the drive, and what is pending since the image was made',
      },
    })
    .input(VmRef)
    .output(CloudInitOutput)
    .query(async ({ ctx, input }) => {
      const deps = ctx.services.deps;
      const s = await readCloudInit(deps, input.namespace, input.name);
      return {
        namespace: input.namespace,
        name: input.name,
        running: vmiActive(deps.cluster.cache.get('VirtualMachineInstance', input.namespace, input.name)),
        drive: s.drive ?? null,
        handWritten: s.handWritten,
        user: s.settings.user ?? null,
        passwordSet: s.passwordSet,
        sshKeys: s.settings.sshKeys,
        ipConfigs: Object.entries(s.settings.ipConfigs)
          .map(([nic, c]) => ({ nic: Number(nic), ...c }))
          .sort((a, b) => a.nic - b.nic),
        nameservers: s.settings.nameservers,
        searchDomains: s.settings.searchDomains,
        type: s.drive?.type ?? s.type,
        typeSet: s.settings.type !== undefined,
        upgrade: s.settings.upgrade !== false,
        custom: {
          ...(s.settings.custom.user ? { user: s.settings.custom.user } : {}),
          ...(s.settings.custom.network ? { network: s.settings.custom.network } : {}),
        },
        pending: s.pending,
      };
    }),

  set: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: vm,
        tags,
        summary:
          'Change cloud-init settings and/or add or remove the drive (a task). A stopped VM’s image is regenerated at once; a running VM’s change is pending until regenerate',
      },
    })
    .input(CloudInitSetInput)
    .output(CloudInitTask)
    .mutation(async ({ ctx, input }) => {
      const { namespace, name, drive, bus, regenerate } = input;
      const change: CloudInitChange = {};
      if (input.user !== undefined) change.user = input.user;
      if (input.password !== undefined) change.password = input.password;
      if (input.sshKeys !== undefined) change.sshKeys = input.sshKeys?.map((k) => k.trim()).filter(Boolean) ?? null;
      if (input.nameservers !== undefined) change.nameservers = input.nameservers;
      if (input.searchDomains !== undefined) change.searchDomains = input.searchDomains;
      if (input.type !== undefined) change.type = input.type;
      if (input.upgrade !== undefined) change.upgrade = input.upgrade;
      if (input.custom !== undefined) change.custom = input.custom;
      if (input.ipConfigs !== undefined) {
        change.replaceIpConfigs = true;
        change.ipConfigs = Object.fromEntries(
          (input.ipConfigs ?? []).map(({ nic, ...c }): [string, IpConfig] => [String(nic), c]),
        );
      }
      const task = await restErrors(
        setCloudInit(ctx.services.deps, { identity: ctx.identity }, namespace, name, change, {
          ...(drive === 'add' ? { drive: { disk: 'cloudinitdisk', bus: bus ?? 'sata' } } : {}),
          ...(drive === 'remove' ? { drive: 'remove' as const } : {}),
          ...(regenerate ? { regenerate: true } : {}),
        }),
      );
      return { status: 'ok' as const, task };
    }),

  regenerate: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/regenerate`,
        tags,
        summary:
          'Regenerate the image from the current settings (the guest reads it at its next boot); 409 without a drive',
      },
    })
    .input(VmRef)
    .output(CloudInitTask)
    .mutation(async ({ ctx, input }) => ({
      status: 'ok' as const,
      task: await restErrors(
        regenerateCloudInit(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name),
      ),
    })),

  dump: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/dump`,
        tags,
        summary:
          'The user-data, network-config or meta-data the settings generate; the password appears as its hash, and only to admins',
      },
    })
    .input(CloudInitDumpInput)
    .output(CloudInitDump)
    .query(async ({ ctx, input }) => {
      const text = await restErrors(dumpCloudInit(ctx.services.deps, input.namespace, input.name, input.type));
      // Even a hash is not for read-only logins: they see it masked as the Proxmox config masks the password.
      return {
        type: input.type,
        text: ctx.identity.admin ? text : text.replace(/^password: .*$/m, `password: ${MASKED_PASSWORD}`),
      };
    }),
});
