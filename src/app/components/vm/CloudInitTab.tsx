'use client';
// Cloud-Init, as Proxmox lays it out: user, password (write-only), DNS domain and servers, SSH keys, package upgrade,
// an IP config per NIC, each with Edit, and "Regenerate image". A running VM's changes are pending (orange) until
// the image is regenerated; a stopped VM's image is remade with every change.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { ipConfigText, keySummary, nicIndex, pendingLabel, pendingOf, readable } from '../../lib/cloudinit';
import type { VmRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { EditDialog, useSet, type Field } from './CloudInitEdit';
import type { VmTabProps } from './tabs';
import { vmRef } from '../../lib/cluster-links';

function useCloudInit(vm: VmRow) {
  const trpc = useTRPC();
  return useQuery(trpc.cloudInit.get.queryOptions({ ...vmRef(vm) }, { retry: false }));
}

export function CloudInitTab({ vm, readOnly }: VmTabProps) {
  const query = useCloudInit(vm);
  const trpc = useTRPC();
  // Only the NIC list is needed from the hardware view (an IP Config row per NIC).
  const hw = useQuery(trpc.hardware.get.queryOptions({ ...vmRef(vm) }, { retry: false }));
  const queryClient = useQueryClient();
  const [field, setField] = useState<Field | null>(null);
  const refresh = () =>
    queryClient.invalidateQueries({
      queryKey: trpc.cloudInit.get.queryKey({ ...vmRef(vm) }),
    });
  const regenerate = useMutation(trpc.cloudInit.regenerate.mutationOptions({ onSuccess: refresh }));
  const drive = useSet(vm, () => undefined);
  if (query.isError)
    return (
      <section className="panel">
        <div className="panel-body">
          <div className="inline-error" data-testid="cloudinit-error">
            Cloud-init unavailable: {query.error.message}
          </div>
        </div>
      </section>
    );
  const ci = query.data;
  if (!ci) return <div className="skeleton">Loading cloud-init…</div>;
  const nics = (hw.data?.nics ?? []).map((n, i) => ({ index: nicIndex(n.name, i), name: n.name }));
  const ipRows = [...nics];
  for (const c of ci.ipConfigs)
    if (!ipRows.some((n) => n.index === c.nic)) ipRows.push({ index: c.nic, name: `net${c.nic}` });
  const editable = !readOnly && !ci.handWritten;
  const none = <span className="page-sub">none</span>;
  const edit = (f: Field, label: string) =>
    editable ? (
      <td className="row-actions">
        <div className="row-actions-inner">
          <button type="button" className="btn-small" title={`Edit ${label} of ${vm.name}`} onClick={() => setField(f)}>
            Edit
          </button>
        </div>
      </td>
    ) : readOnly ? undefined : (
      <td />
    );
  const row = (key: string, label: string, value: ReactNode, f: Field, secret = false) => {
    const p = pendingOf(ci, key);
    return (
      <tr key={key} data-testid={`ci-${key}`} className={p ? 'row-pending' : undefined}>
        <th scope="row">{label}</th>
        <td className="hw-value">
          {/* With a change pending the image still has the old value: show that, and the new one below. */}
          {p?.value !== undefined ? (
            secret ? (
              '**********'
            ) : (
              <span className="mono">{readable(key, p.value)}</span>
            )
          ) : p?.pending !== undefined ? (
            none
          ) : (
            value
          )}
          {p && (
            <span className="pending-note" title="Saved; regenerate the image for the guest to get it">
              {' '}
              pending: {pendingLabel(p, secret)}
            </span>
          )}
        </td>
        {edit(f, label)}
      </tr>
    );
  };
  const regenWhy = !ci.drive
    ? 'the VM has no cloud-init drive'
    : ci.handWritten
      ? 'the user data was written by hand at create'
      : null;
  return (
    <section className="panel" aria-labelledby="cloudinit-title">
      <div className="panel-head">
        <h2 id="cloudinit-title">Cloud-Init</h2>
        <span className="page-sub" data-testid="ci-summary">
          {ci.pending.length
            ? 'pending changes reach the guest after "Regenerate image" and a reboot'
            : ci.drive
              ? 'the image is up to date'
              : ''}
        </span>
        <span className="header-spacer" />
        {!readOnly && (
          <div className="ci-actions">
            {ci.drive ? (
              <button
                type="button"
                className="btn-small"
                disabled={drive.isPending}
                title={`Detach the cloud-init drive ${ci.drive.disk} (the settings stay)`}
                onClick={() => drive.mutate({ ...vmRef(vm), drive: 'remove' })}
              >
                Remove drive
              </button>
            ) : (
              <button
                type="button"
                className="btn-small"
                disabled={drive.isPending}
                title="Attach a cloud-init drive generated from these settings"
                onClick={() => drive.mutate({ ...vmRef(vm), drive: 'add' })}
              >
                Add drive
              </button>
            )}
            <button
              type="button"
              className="btn-small"
              data-testid="ci-regenerate"
              disabled={regenWhy !== null || regenerate.isPending}
              title={regenWhy ? `Regenerate image: ${regenWhy}` : 'Regenerate the image from the current settings'}
              onClick={() => regenerate.mutate({ ...vmRef(vm) })}
            >
              {regenerate.isPending ? 'Regenerating…' : 'Regenerate image'}
            </button>
          </div>
        )}
      </div>
      {(regenerate.error ?? drive.error) && (
        <div className="inline-error">{(regenerate.error ?? drive.error)?.message}</div>
      )}
      {ci.handWritten && (
        <p className="page-sub panel-body" data-testid="ci-handwritten">
          This VM&apos;s user data was written by hand at create (Secret{' '}
          <span className="mono">{ci.drive?.secret}</span>
          ); edit it there, or remove the drive and add one to generate it from settings.
        </p>
      )}
      <div className="table-scroll">
        <table className="data-table hw-table" data-testid="cloudinit-table">
          <tbody>
            <tr data-testid="ci-drive">
              <th scope="row">Drive</th>
              <td className="hw-value">
                {ci.drive ? (
                  <>
                    <span className="mono">{ci.drive.disk}</span>{' '}
                    <span className="page-sub">
                      ({ci.drive.bus}, {ci.drive.type === 'nocloud' ? 'NoCloud' : 'ConfigDrive'}, Secret{' '}
                      <span className="mono">{ci.drive.secret}</span>)
                    </span>
                  </>
                ) : (
                  none
                )}
              </td>
              {readOnly ? undefined : <td />}
            </tr>
            {row('ciuser', 'User', ci.user ?? <span className="page-sub">image default</span>, 'user')}
            {row('cipassword', 'Password', ci.passwordSet ? '**********' : none, 'password', true)}
            {row(
              'searchdomain',
              'DNS domain',
              ci.searchDomains.join(' ') || <span className="page-sub">use host settings</span>,
              'dns',
            )}
            {row(
              'nameserver',
              'DNS servers',
              ci.nameservers.join(' ') || <span className="page-sub">use host settings</span>,
              'dns',
            )}
            {row(
              'sshkeys',
              'SSH public keys',
              ci.sshKeys.length ? (
                <span className="mono ci-keys">
                  {ci.sshKeys.map((k) => (
                    <span key={k}>{keySummary(k)}</span>
                  ))}
                </span>
              ) : (
                none
              ),
              'keys',
            )}
            {row('ciupgrade', 'Upgrade packages', ci.upgrade ? 'Yes' : 'No', 'upgrade')}
            {row(
              'citype',
              'Type',
              `${ci.type === 'nocloud' ? 'NoCloud' : 'ConfigDrive'}${ci.typeSet ? '' : ' (default)'}`,
              'type',
            )}
            {ipRows.map((n) => {
              const c = ci.ipConfigs.find((x) => x.nic === n.index);
              return row(
                `ipconfig${n.index}`,
                `IP Config (net${n.index})`,
                c ? <span className="mono">{ipConfigText(c)}</span> : none,
                { nic: n.index, label: `net${n.index}` },
              );
            })}
          </tbody>
        </table>
      </div>
      {editable && field !== null && <EditDialog vm={vm} ci={ci} field={field} onClose={() => setField(null)} />}
    </section>
  );
}
