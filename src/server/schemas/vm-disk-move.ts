/** Moving a disk to another StorageClass: api.md "POST /api/vms/{ns}/{name}/disks/{disk}/move". */
import { z } from 'zod';
import { K8sName, K8sSubdomain, VmRef } from './common';

export const DiskMoveInput = VmRef.extend({
  disk: K8sName.describe("the disk's name in the VM spec (GET …/hardware → disks[].name)"),
  storageClass: K8sSubdomain.describe('the StorageClass to move it to'),
  deleteSource: z
    .boolean()
    .optional()
    .describe('delete the old volume once the VM uses the copy (default false: it is kept, unattached)'),
});
export type DiskMoveInput = z.infer<typeof DiskMoveInput>;
