/** Console metadata: who holds a VM's consoles, and the serial output Corral retained for it. */
import { z } from 'zod';
import { VmRef } from './common';

export const ConsoleHolder = z.object({
  kind: z.enum(['vnc', 'serial']),
  login: z.string(),
  displayName: z.string(),
  readOnly: z.boolean(),
  since: z.string().describe('ISO time the session started'),
});

export const ConsoleSessions = z.object({
  vnc: ConsoleHolder.nullable(),
  serial: ConsoleHolder.nullable(),
});

export const SerialLogInput = VmRef.extend({
  format: z
    .enum(['text', 'base64'])
    .default('text')
    .describe('text: UTF-8 (invalid bytes become U+FFFD); base64: the exact bytes'),
});

export const SerialLog = z.object({
  namespace: z.string(),
  name: z.string(),
  bytes: z.number().int().describe('size of the retained log in bytes (at most 262144)'),
  format: z.enum(['text', 'base64']),
  log: z.string(),
});
