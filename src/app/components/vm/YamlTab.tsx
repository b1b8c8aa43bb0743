'use client';
import { useMemo } from 'react';
import { toRedactedYaml } from '../../lib/redact';
import { useVmManifest } from '../../lib/vm-manifest';
import type { VmTabProps } from './tabs';

export function YamlTab({ vm }: VmTabProps) {
  const manifest = useVmManifest(vm.namespace, vm.name, vm);
  const yaml = useMemo(() => (manifest.data ? toRedactedYaml(manifest.data) : ''), [manifest.data]);
  return (
    <section className="panel">
      <div className="panel-head">
        <h2>VirtualMachine {vm.name}</h2>
        <span className="page-sub">as stored in the cluster; secrets and cloud-init user data redacted</span>
        <span className="header-spacer" />
        {yaml && (
          <button type="button" className="btn-small" onClick={() => void navigator.clipboard?.writeText(yaml)}>
            Copy
          </button>
        )}
      </div>
      {manifest.isError ? (
        <div className="panel-body">
          <div className="inline-error">Could not load the VM object: {manifest.error.message}</div>
        </div>
      ) : manifest.data ? (
        <pre className="yaml mono" data-testid="vm-yaml" tabIndex={0}>
          {yaml}
        </pre>
      ) : (
        <div className="skeleton">Loading…</div>
      )}
    </section>
  );
}
