/**
 * WebSocket close codes the console bridges send to the browser. Browsers never see the HTTP status of a refused
 * upgrade (only a bare 1006), so every refusal after the upgrade is a close frame with one of these codes and a
 * reason a person can act on. The 4xxx codes mirror the HTTP statuses the REST API would use.
 */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  internalError: 1011,
  /** Another viewer opened this console through Corral ("Take over"). */
  takenOver: 4001,
  badRequest: 4000,
  /** Read-only caller asked for something that needs admin (serial terminal). */
  forbidden: 4003,
  /** No such VM / VMI. */
  notFound: 4004,
  /** The VM exists but is not running (KubeVirt refuses consoles of stopped VMIs). */
  notRunning: 4009,
  /** Someone else holds the console and the caller did not ask to take it over. */
  inUse: 4029,
  /** The cluster could not be reached or answered with an unexpected error. */
  clusterError: 4502,
  /** No pong within the keep-alive window. */
  keepaliveTimeout: 4408,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

/** RFC 6455 limits a close reason to 123 bytes of UTF-8 (125 minus the 2-byte code). */
const MAX_REASON_BYTES = 123;

export function truncateReason(reason: string): string {
  const bytes = Buffer.from(reason, 'utf8');
  if (bytes.length <= MAX_REASON_BYTES) return reason;
  // Cut on a character boundary: decoding a cut multi-byte sequence would add U+FFFD (3 bytes) and overflow.
  let cut = MAX_REASON_BYTES - 3;
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return bytes.subarray(0, cut).toString('utf8') + '...';
}

/** Codes a peer may put on the wire (1004–1006 and 1015 are reserved for local use only). */
export function isSendableCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
  );
}

/**
 * Turns a close observed on one side into a close we can send to the other side: 1005 (no status) becomes a
 * normal close, 1006 (connection dropped) becomes 1011 with an explanation, reasons are kept but truncated.
 */
export function relayableClose(
  code: number,
  reason: string,
  droppedExplanation: string,
): { code: number; reason: string } {
  if (code === 1005) return { code: CloseCode.normal, reason: truncateReason(reason) };
  if (!isSendableCode(code))
    return { code: CloseCode.internalError, reason: truncateReason(reason || droppedExplanation) };
  return { code, reason: truncateReason(reason) };
}
