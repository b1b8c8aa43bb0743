/**
 * A VM's hardware as data, and the operations that change it — one implementation behind both front doors (the
 * Proxmox translator under /api2/json and Corral's own /api). Split by concern:
 *
 * - vm-hw-facts: reading a VM's CPU, memory, disks and NICs (and an instancetype's size);
 * - vm-hw-compose: a VM from an explicit description (Proxmox create);
 * - vm-hw-cpu: CPU/memory and metadata changes, scale (live hot-plug or stop → patch → start);
 * - vm-hw-disks: add (hot-plugged), detach, grow disks; StorageClass facts;
 * - vm-hw-nics: add/remove Multus NICs; NetworkAttachmentDefinitions;
 * - vm-hw-options: run strategy (start on boot), firmware, boot order, description;
 * - vm-hw-view: the Hardware/Options view with its controls and pending changes.
 *
 * Transport-free like the rest of the domain: it speaks bytes, StorageClasses and KubeVirt buses.
 */
export * from './vm-hw-facts';
export * from './vm-hw-compose';
export * from './vm-hw-cpu';
export * from './vm-hw-disks';
export * from './vm-hw-nics';
export * from './vm-hw-options';
export * from './vm-hw-view';
