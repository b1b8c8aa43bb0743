// The shapes the UI renders, taken from the server's zod schemas as types only (erased at build time, so no
// server code reaches the browser bundle). A renamed field is then a type error here, not an empty cell.
import type { z } from 'zod';
import type { HardwareOutput, NadRow as NadRowSchema } from '@/server/schemas/vm-hardware';
export type { VmRow, DeletionPlan, VmCreateInput } from '@/server/schemas/vms';
export type { NodeRow } from '@/server/schemas/nodes';
export type { ClusterStatus } from '@/server/schemas/contexts';
export type { CtRow } from '@/server/schemas/cts';
export type { Task as TaskRow } from '@/server/schemas/tasks';
export type { CatalogImage } from '@/server/schemas/images';
export type { FleetEvent } from '@/server/schemas/live';
export type { SnapshotRow } from '@/server/schemas/vm-ops';
/** `hardware.get`: processors, memory, disks, NICs, options, pending changes and what can change now. */
export type HardwareView = z.infer<typeof HardwareOutput>;
export type NadRow = z.infer<typeof NadRowSchema>;
