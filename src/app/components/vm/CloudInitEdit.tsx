'use client';
// The Cloud-Init tab's Edit dialog: one field (or one NIC's IP config) at a time, sent as one `cloudInit.set`.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { ipConfigText, lines, words, type CloudInitView, type IpConfig, type SetInput } from '../../lib/cloudinit';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { ActionDialog } from './ActionDialog';
import { vmRef } from '../../lib/cluster-links';

export type Field = 'user' | 'password' | 'dns' | 'keys' | 'upgrade' | 'type' | { nic: number; label: string };

export function useSet(vm: VmRow, onDone: () => void) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.cloudInit.set.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({
          queryKey: trpc.cloudInit.get.queryKey({ ...vmRef(vm) }),
        });
        onDone();
      },
    }),
  );
}

export function EditDialog({
  vm,
  ci,
  field,
  onClose,
}: {
  vm: VmRow;
  ci: CloudInitView;
  field: Field;
  onClose: () => void;
}) {
  const set = useSet(vm, onClose);
  const [user, setUser] = useState(ci.user ?? '');
  const [password, setPassword] = useState('');
  const [clearPassword, setClearPassword] = useState(false);
  const [search, setSearch] = useState(ci.searchDomains.join(' '));
  const [servers, setServers] = useState(ci.nameservers.join(' '));
  const [keys, setKeys] = useState(ci.sshKeys.join('\n'));
  const [upgrade, setUpgrade] = useState(ci.upgrade);
  const [type, setType] = useState<'nocloud' | 'configdrive2'>(ci.type);
  const nic = typeof field === 'object' ? field.nic : -1;
  const current = ci.ipConfigs.find((c) => c.nic === nic);
  const [ip, setIp] = useState<IpConfig>(current ?? { nic });
  const [ipMode, setIpMode] = useState(current?.ip === 'dhcp' ? 'dhcp' : current?.ip ? 'static' : 'none');
  const [ip6Mode, setIp6Mode] = useState(
    current?.ip6 === 'dhcp' ? 'dhcp' : current?.ip6 === 'auto' ? 'auto' : current?.ip6 ? 'static' : 'none',
  );
  useEffect(() => set.reset(), [field]);

  let title: string;
  let change: SetInput | null;
  let body: ReactNode;
  if (field === 'user') {
    title = 'User';
    change = user.trim() === (ci.user ?? '') ? null : { user: user.trim() || null };
    body = (
      <label className="field">
        <span className="field-label">User (empty: the image&apos;s default user)</span>
        <input value={user} onChange={(e) => setUser(e.target.value)} autoComplete="off" data-testid="ci-user-input" />
      </label>
    );
  } else if (field === 'password') {
    title = 'Password';
    change = clearPassword ? { password: null } : password ? { password } : null;
    body = (
      <>
        <label className="field">
          <span className="field-label">New password (stored hashed; never shown again)</span>
          <input
            type="password"
            value={password}
            disabled={clearPassword}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="new-password"
            data-testid="ci-password-input"
          />
        </label>
        {ci.passwordSet && (
          <label className="check">
            <input type="checkbox" checked={clearPassword} onChange={(e) => setClearPassword(e.target.checked)} />
            <span>Remove the password</span>
          </label>
        )}
      </>
    );
  } else if (field === 'dns') {
    title = 'DNS';
    const s = words(search);
    const n = words(servers);
    change =
      s.join(' ') === ci.searchDomains.join(' ') && n.join(' ') === ci.nameservers.join(' ')
        ? null
        : { searchDomains: s, nameservers: n };
    body = (
      <>
        <label className="field">
          <span className="field-label">DNS domain (empty: the host&apos;s)</span>
          <input value={search} onChange={(e) => setSearch(e.target.value)} placeholder="example.internal" />
        </label>
        <label className="field">
          <span className="field-label">DNS servers, separated by spaces (empty: the host&apos;s)</span>
          <input value={servers} onChange={(e) => setServers(e.target.value)} placeholder="1.1.1.1 9.9.9.9" />
        </label>
      </>
    );
  } else if (field === 'keys') {
    title = 'SSH public keys';
    const k = lines(keys);
    change = k.join('\n') === ci.sshKeys.join('\n') ? null : { sshKeys: k };
    body = (
      <label className="field">
        <span className="field-label">One key per line (authorized_keys format)</span>
        <textarea
          rows={5}
          className="mono"
          value={keys}
          onChange={(e) => setKeys(e.target.value)}
          placeholder="ssh-ed25519 AAAA… you@laptop"
          data-testid="ci-keys-input"
        />
      </label>
    );
  } else if (field === 'upgrade') {
    title = 'Upgrade packages';
    change = upgrade === ci.upgrade ? null : { upgrade };
    body = (
      <label className="check">
        <input type="checkbox" checked={upgrade} onChange={(e) => setUpgrade(e.target.checked)} />
        <span>Upgrade packages on first boot (package_upgrade)</span>
      </label>
    );
  } else if (field === 'type') {
    title = 'Type';
    change = type === ci.type && ci.typeSet ? null : { type };
    body = (
      <fieldset className="radio-group">
        <legend className="field-label">Image type</legend>
        <label className="check">
          <input type="radio" name="ci-type" checked={type === 'nocloud'} onChange={() => setType('nocloud')} />
          NoCloud (Linux)
        </label>
        <label className="check">
          <input
            type="radio"
            name="ci-type"
            checked={type === 'configdrive2'}
            onChange={() => setType('configdrive2')}
          />
          ConfigDrive (Windows, cloudbase-init)
        </label>
      </fieldset>
    );
  } else {
    title = `IP Config (${field.label})`;
    const next: IpConfig = {
      nic,
      ...(ipMode === 'dhcp' ? { ip: 'dhcp' } : ipMode === 'static' && ip.ip ? { ip: ip.ip } : {}),
      ...(ipMode === 'static' && ip.gw ? { gw: ip.gw } : {}),
      ...(ip6Mode === 'dhcp' || ip6Mode === 'auto'
        ? { ip6: ip6Mode }
        : ip6Mode === 'static' && ip.ip6
          ? { ip6: ip.ip6 }
          : {}),
      ...(ip6Mode === 'static' && ip.gw6 ? { gw6: ip.gw6 } : {}),
    };
    const others = ci.ipConfigs.filter((c) => c.nic !== nic);
    const empty = !next.ip && !next.ip6;
    change = ipConfigText(next) === ipConfigText(current) ? null : { ipConfigs: empty ? others : [...others, next] };
    const mode = (name: string, value: string, set: (v: string) => void, options: [string, string][]) => (
      <fieldset className="radio-group">
        <legend className="field-label">{name}</legend>
        {options.map(([v, label]) => (
          <label key={v} className="check">
            <input type="radio" name={name} checked={value === v} onChange={() => set(v)} />
            {label}
          </label>
        ))}
      </fieldset>
    );
    body = (
      <>
        {mode('IPv4', ipMode, setIpMode, [
          ['none', 'None'],
          ['static', 'Static'],
          ['dhcp', 'DHCP'],
        ])}
        {ipMode === 'static' && (
          <div className="ci-pair">
            <label className="field">
              <span className="field-label">IPv4/CIDR</span>
              <input
                value={ip.ip ?? ''}
                onChange={(e) => setIp({ ...ip, ip: e.target.value })}
                placeholder="10.0.0.5/24"
                data-testid="ci-ip-input"
              />
            </label>
            <label className="field">
              <span className="field-label">Gateway</span>
              <input
                value={ip.gw ?? ''}
                onChange={(e) => setIp({ ...ip, gw: e.target.value })}
                placeholder="10.0.0.1"
              />
            </label>
          </div>
        )}
        {mode('IPv6', ip6Mode, setIp6Mode, [
          ['none', 'None'],
          ['static', 'Static'],
          ['dhcp', 'DHCP'],
          ['auto', 'SLAAC'],
        ])}
        {ip6Mode === 'static' && (
          <div className="ci-pair">
            <label className="field">
              <span className="field-label">IPv6/CIDR</span>
              <input value={ip.ip6 ?? ''} onChange={(e) => setIp({ ...ip, ip6: e.target.value })} />
            </label>
            <label className="field">
              <span className="field-label">Gateway</span>
              <input value={ip.gw6 ?? ''} onChange={(e) => setIp({ ...ip, gw6: e.target.value })} />
            </label>
          </div>
        )}
      </>
    );
  }
  return (
    <ActionDialog
      title={`${title}: ${vm.name}`}
      open
      onClose={onClose}
      label="Save"
      busyLabel="Saving…"
      busy={set.isPending}
      error={set.error}
      problem={change ? null : 'nothing changed'}
      form={{
        id: 'cloudinit-form',
        onSubmit: () => {
          if (change) set.mutate({ ...vmRef(vm), ...change });
        },
      }}
    >
      {body}
      {ci.running && ci.drive && (
        <p className="pending-note" style={{ margin: 0 }}>
          The VM runs: the change is saved now and reaches the guest after &quot;Regenerate image&quot; and a reboot.
        </p>
      )}
    </ActionDialog>
  );
}
