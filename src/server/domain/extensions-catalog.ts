/**
 * The extensions Corral ships (its marketplace catalog). Each entry says what it installs and what it needs, and
 * builds the objects it applies. An extension is shipped here only when it works end to end; Corral labels every
 * object it applies with `corral.dev/extension=<name>` (extensions.ts), so uninstall finds exactly them.
 */
import type { Kind, KObject } from './cluster-port';
import { powerSchedulesExtension, snapshotSchedulesExtension } from './schedules-spec';

export const EXTENSION_LABEL = 'corral.dev/extension';

/** One object an extension applies: its kind and the applied configuration (name and namespace set). */
export interface ExtensionObject {
  kind: Kind;
  object: KObject;
}

export interface ExtensionSpec {
  name: string;
  description: string;
  version: string;
  /** What it installs, one line each (shown on the card). */
  installs: string[];
  /** What it needs from the cluster to do its work. */
  needs: string[];
  /** Kinds of objects Corral creates later under the extension's label (a schedule's CronJob); uninstall removes them too. */
  owns?: Kind[];
  /** The objects it applies, for Corral's namespace. */
  objects(namespace: string): ExtensionObject[];
}

/** ServiceAccount the bootc build Job runs as (vm-spec.ts buildBootcJob); bootc-capability.ts checks it exists. */
export const BOOTC_BUILDER_SA = 'corral-bootc-builder';

const bootc: ExtensionSpec = {
  name: 'bootc',
  description:
    'Create VMs from bootable container images: the build Job (bootc-image-builder) runs as its own ServiceAccount, ' +
    'allowed to run privileged where the cluster polices that (OpenShift SCCs).',
  version: '0.1.0',
  installs: [
    `ServiceAccount ${BOOTC_BUILDER_SA} (no API token mounted)`,
    `Role ${BOOTC_BUILDER_SA}: use the "privileged" SecurityContextConstraints`,
    `RoleBinding ${BOOTC_BUILDER_SA}: binds the Role to the ServiceAccount`,
  ],
  needs: [
    'CDI (the build writes the disk into a DataVolume)',
    'a ready amd64 or arm64 node that may run privileged pods',
    "Corral's namespace not enforcing a Pod Security level below privileged",
  ],
  objects: (namespace) => [
    {
      kind: 'ServiceAccount',
      object: {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: BOOTC_BUILDER_SA, namespace },
        automountServiceAccountToken: false,
      },
    },
    {
      kind: 'Role',
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: BOOTC_BUILDER_SA, namespace },
        rules: [
          {
            apiGroups: ['security.openshift.io'],
            resources: ['securitycontextconstraints'],
            resourceNames: ['privileged'],
            verbs: ['use'],
          },
        ],
      },
    },
    {
      kind: 'RoleBinding',
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: BOOTC_BUILDER_SA, namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: BOOTC_BUILDER_SA },
        subjects: [{ kind: 'ServiceAccount', name: BOOTC_BUILDER_SA, namespace }],
      },
    },
  ],
};

export const EXTENSION_CATALOG: readonly ExtensionSpec[] = [bootc, snapshotSchedulesExtension, powerSchedulesExtension];
