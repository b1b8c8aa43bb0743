// The create wizard's form: its state, its client-side checks, and the request it becomes. Pure, so the rules
// (exactly one source, instancetype replaces cpu/mem, empty optionals omitted) are unit-tested.
import type { VmCreateInput } from './model';
import {
  cpuProblem,
  diskProblem,
  imageRefProblem,
  memoryProblem,
  nameProblem,
  sshKeyProblem,
  urlProblem,
} from './validation';

export type SourceKind =
  'image' | 'dataVolume' | 'isoDataVolume' | 'containerDisk' | 'import' | 'iso' | 'pvc' | 'bootc' | 'template';

/** The wizard's source tabs. The Image library tab holds two sources: dataVolume (a disk) and isoDataVolume. */
export const SOURCE_KINDS: { kind: SourceKind; label: string; hint: string }[] = [
  { kind: 'image', label: 'Catalog', hint: 'A curated, ready-to-boot image' },
  {
    kind: 'dataVolume',
    label: 'Image library',
    hint: 'An image imported or uploaded on the Images page: a disk is cloned as the root disk; an ISO boots as install media beside a blank disk',
  },
  { kind: 'containerDisk', label: 'Container disk', hint: 'An OCI containerdisk image (ephemeral root disk)' },
  { kind: 'import', label: 'URL import', hint: 'A qcow2 or raw image imported into a new disk' },
  { kind: 'iso', label: 'ISO', hint: 'Boot an installer ISO with a blank disk' },
  { kind: 'pvc', label: 'Existing PVC', hint: 'Clone an existing disk (the original is never booted)' },
  { kind: 'bootc', label: 'bootc', hint: 'Build a disk from a bootable container image' },
  { kind: 'template', label: 'Template', hint: 'A full clone of a template VM: its disks and its configuration' },
];

export interface SizePreset {
  id: string;
  label: string;
  cpu: number;
  mem: string;
  disk: string;
}

export const SIZE_PRESETS: SizePreset[] = [
  { id: 'small', label: 'Small', cpu: 1, mem: '2Gi', disk: '10Gi' },
  { id: 'medium', label: 'Medium', cpu: 2, mem: '4Gi', disk: '20Gi' },
  { id: 'large', label: 'Large', cpu: 4, mem: '8Gi', disk: '40Gi' },
  { id: 'xlarge', label: 'X-Large', cpu: 8, mem: '16Gi', disk: '80Gi' },
];

export interface CreateForm {
  source: SourceKind;
  /** The value for the chosen source: catalog name, image ref, URL or PVC name. */
  sourceValue: string;
  name: string;
  namespace: string;
  cpu: number;
  mem: string;
  disk: string;
  node: string;
  instancetype: string;
  preference: string;
  sshKey: string;
  cloudInit: string;
  /** Power on right after creation (the server's default is to create it stopped, like Proxmox). */
  start: boolean;
}

/** What the wizard starts from: a catalog image, the Medium size, powered on after creation. */
export const DEFAULT_CREATE_FORM: CreateForm = {
  source: 'image',
  sourceValue: '',
  name: '',
  namespace: '',
  cpu: 2,
  mem: '4Gi',
  disk: '20Gi',
  node: '',
  instancetype: '',
  preference: '',
  sshKey: '',
  cloudInit: '',
  start: true,
};

export const FORM_FIELDS = [
  'source',
  'name',
  'namespace',
  'cpu',
  'mem',
  'disk',
  'node',
  'instancetype',
  'preference',
  'sshKey',
  'cloudInit',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** Server field names that mean "the source" (the server names the source field it refused). */
export const SOURCE_FIELD_NAMES = [
  'image',
  'containerDisk',
  'import',
  'iso',
  'pvc',
  'bootc',
  'dataVolume',
  'isoDataVolume',
] as const;
const SOURCE_FIELDS = new Set<string>(['source', ...SOURCE_FIELD_NAMES]);

/** The tab a source is picked on (an ISO from the library is on the Image library tab). */
export function tabOf(kind: SourceKind): SourceKind {
  return kind === 'isoDataVolume' ? 'dataVolume' : kind;
}

/** How the configuration step names the chosen source. */
export function sourceLabel(kind: SourceKind): string {
  if (kind === 'dataVolume') return 'Library disk';
  if (kind === 'isoDataVolume') return 'Library ISO';
  return SOURCE_KINDS.find((s) => s.kind === kind)?.label ?? kind;
}

export function formFieldOf(serverField: string): FormField | null {
  if (SOURCE_FIELDS.has(serverField)) return 'source';
  return (FORM_FIELDS as readonly string[]).includes(serverField) ? (serverField as FormField) : null;
}

/** A disk size only makes sense for sources that create a disk Corral sizes. */
export function sourceHasDisk(kind: SourceKind): boolean {
  return (
    kind === 'import' ||
    kind === 'iso' ||
    kind === 'pvc' ||
    kind === 'bootc' ||
    kind === 'dataVolume' ||
    kind === 'isoDataVolume'
  );
}

export function sourceProblem(kind: SourceKind, value: string): string | null {
  switch (kind) {
    case 'image':
      return value ? null : 'Pick an image from the catalog';
    case 'dataVolume':
    case 'isoDataVolume':
      return value ? nameProblem(value) : 'Pick an image from the library';
    case 'containerDisk':
    case 'bootc':
      return imageRefProblem(value);
    case 'import':
    case 'iso':
      return urlProblem(value);
    case 'pvc':
      return value ? nameProblem(value) && `PVC name: ${nameProblem(value)}` : 'Name the PVC to clone';
    case 'template':
      return templateRef(value) ? null : 'Pick a template';
  }
}

export function validateForm(form: CreateForm): Partial<Record<FormField, string>> {
  const errors: Partial<Record<FormField, string>> = {};
  const put = (field: FormField, problem: string | null) => {
    if (problem) errors[field] = problem;
  };
  put('source', sourceProblem(form.source, form.sourceValue.trim()));
  put('name', nameProblem(form.name));
  if (form.namespace) put('namespace', nameProblem(form.namespace) && `Namespace: ${nameProblem(form.namespace)}`);
  // A clone copies the template's size and disks: only the name (and namespace) are the wizard's.
  if (form.source === 'template') return errors;
  if (!form.instancetype) {
    put('cpu', cpuProblem(form.cpu));
    put('mem', memoryProblem(form.mem));
  }
  if (sourceHasDisk(form.source)) put('disk', diskProblem(form.disk));
  put('sshKey', sshKeyProblem(form.sshKey));
  return errors;
}

/** `namespace/name` of a template (the template source's value), or null when it is not one. */
export function templateRef(value: string): { namespace: string; name: string } | null {
  const m = /^([a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/.exec(value.trim());
  return m?.[1] && m[2] ? { namespace: m[1], name: m[2] } : null;
}

/** The template source becomes `clones.create` (the template is cloned under the new name), not `vms.create`. */
export function toCloneInput(form: CreateForm): {
  ns: string;
  name: string;
  target: string;
  namespace?: string;
  start: boolean;
} | null {
  const ref = form.source === 'template' ? templateRef(form.sourceValue) : null;
  if (!ref) return null;
  return {
    ns: ref.namespace,
    name: ref.name,
    target: form.name,
    ...(form.namespace && form.namespace !== ref.namespace ? { namespace: form.namespace } : {}),
    start: form.start,
  };
}

export function toCreateInput(form: CreateForm): VmCreateInput {
  const input: VmCreateInput = { name: form.name, [form.source]: form.sourceValue.trim() };
  if (form.namespace) input.namespace = form.namespace;
  if (form.instancetype) input.instancetype = form.instancetype;
  else {
    input.cpu = form.cpu;
    input.mem = form.mem.trim();
  }
  if (sourceHasDisk(form.source)) input.disk = form.disk.trim();
  if (form.preference) input.preference = form.preference;
  if (form.node) input.node = form.node;
  if (form.sshKey.trim()) input.sshKey = form.sshKey.trim();
  if (form.cloudInit.trim()) input.cloudInit = form.cloudInit;
  if (form.start) input.start = true;
  return input;
}

/** A free-looking default name from the source (`fedora-k3x9`), which the user can change. */
export function suggestName(base: string, random: () => number = Math.random): string {
  const stem = base
    .toLowerCase()
    .replace(/^.*\//, '')
    .replace(/[:@].*$/, '')
    .replace(/\.(qcow2|img|raw|iso|xz|gz)$/g, '')
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  const suffix = Array.from({ length: 4 }, () => 'abcdefghijkmnpqrstuvwxyz23456789'[Math.floor(random() * 32)]).join(
    '',
  );
  return `${stem || 'vm'}-${suffix}`;
}
