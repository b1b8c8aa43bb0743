/** Label and annotation keys Corral shares with clusters the original Corral already manages (spec README). */
export const LABEL_VM = 'corral.dev/vm';
export const LABEL_TAG_PREFIX = 'corral.dev/tag.';
export const LABEL_TEMPLATE = 'corral.dev/template';
export const LABEL_VMID = 'corral.io/proxmox-vmid';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const ANNOTATION_SOURCE = 'corral.dev/source';
