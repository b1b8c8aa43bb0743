/** The Proxmox door's gap log: api.md "GET /api/proxmox/gaps". */
import { z } from 'zod';

export const ProxmoxGapRow = z.object({
  method: z.string(),
  path: z.string().describe('the path shape under /api2/json, ids and names as {node}, {id}, …'),
  example: z.string().describe('the first concrete path seen (unusual segments as {arg})'),
  count: z.number().int().describe('requests since Corral started'),
  firstSeen: z.string().describe('ISO time'),
  lastSeen: z.string().describe('ISO time'),
  lastCaller: z.string().describe('the Proxmox user or user@realm!token of the latest request'),
});

export const ProxmoxGapReport = z.object({
  gaps: z.array(ProxmoxGapRow).describe('most requested first'),
  dropped: z.number().int().describe('requests for further shapes once `capacity` shapes are itemised'),
  capacity: z.number().int(),
});
