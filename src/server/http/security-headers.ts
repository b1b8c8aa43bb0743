/**
 * Security headers for everything the Next.js UI serves (pages, /_next assets, error pages): a per-request
 * Content-Security-Policy with a script nonce, no framing, no MIME sniffing, no referrer, a locked-down
 * Permissions-Policy. See docs/ui.md "Security headers".
 *
 * Next's App Router reads the nonce from the *request's* Content-Security-Policy header and puts it on its own
 * scripts (framework chunks and the inline flight-data scripts); the root layout reads it with `headers()` for
 * the app's two inline <head> scripts (theme and fleet prefill). So the custom server sets the same policy on
 * the request (for Next) and on the response (for the browser).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface CspOptions {
  /** Fresh per response; base64. */
  nonce: string;
  /** Next dev mode: React's dev build needs eval for its error overlay and server-stack reconstruction. */
  dev?: boolean;
  /**
   * The request's Host, for explicit ws:/wss: sources (CSP3 browsers already match same-origin WebSockets with
   * 'self'; older Safari did not). Ignored unless it is a plain host[:port].
   */
  host?: string;
}

const HOST_RE = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** A fresh CSP nonce: 128 random bits, base64. */
export function createNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The Content-Security-Policy value for one UI response. */
export function contentSecurityPolicy({ nonce, dev = false, host }: CspOptions): string {
  const sockets = host && HOST_RE.test(host) ? ` ws://${host} wss://${host}` : '';
  const directives: [string, string][] = [
    ['default-src', "'self'"],
    // 'strict-dynamic': chunks loaded by the nonce-bearing scripts are trusted; 'self' is the CSP2 fallback.
    ['script-src', `'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ''}`],
    // React renders style="" attributes (the virtualized table, progress bars) and xterm.js injects <style>
    // elements at run time, so inline styles stay allowed. A nonce here would switch 'unsafe-inline' off.
    ['style-src', "'self' 'unsafe-inline'"],
    ['img-src', "'self' data: blob:"],
    ['font-src', "'self' data:"],
    // REST, tRPC (+ SSE) and the console WebSockets (/api/vnc, /api/tty; /_next/hmr in dev), all same-origin.
    ['connect-src', `'self'${sockets}`],
    ['worker-src', "'self' blob:"],
    ['object-src', "'none'"],
    ['base-uri', "'none'"],
    ['form-action', "'self'"],
    ['frame-ancestors', "'none'"],
  ];
  return directives.map(([k, v]) => `${k} ${v}`).join('; ');
}

/** Features the UI never uses, switched off for the page and anything it could embed. */
export const PERMISSIONS_POLICY = [
  'accelerometer=()',
  'camera=()',
  'display-capture=()',
  'geolocation=()',
  'gyroscope=()',
  'magnetometer=()',
  'microphone=()',
  'midi=()',
  'payment=()',
  'usb=()',
  'serial=()',
  'hid=()',
  'fullscreen=(self)',
].join(', ');

/** The non-CSP headers, the same on every UI response. */
export const STATIC_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Permissions-Policy': PERMISSIONS_POLICY,
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Sets the headers on `res` and the policy on `req` (where Next finds the nonce). Any Content-Security-Policy
 * header the client sent is replaced, so a caller cannot choose the nonce. Returns the nonce.
 */
export function applySecurityHeaders(req: IncomingMessage, res: ServerResponse, opts: { dev?: boolean } = {}): string {
  const nonce = createNonce();
  const policy = contentSecurityPolicy({ nonce, dev: opts.dev, host: req.headers.host });
  req.headers['content-security-policy'] = policy;
  delete req.headers['content-security-policy-report-only'];
  res.setHeader('Content-Security-Policy', policy);
  for (const [name, value] of Object.entries(STATIC_SECURITY_HEADERS)) res.setHeader(name, value);
  return nonce;
}

/**
 * The same protection for a fixed HTML page served outside Next (e.g. `/api/docs`): its inline scripts are allowed
 * by their SHA-256 hashes instead of a nonce, so the page can be a constant string.
 */
export function staticPageSecurityHeaders(inlineScripts: readonly string[]): Record<string, string> {
  const hashes = inlineScripts.map((s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`);
  const policy = [
    "default-src 'self'",
    `script-src ${hashes.length ? hashes.join(' ') : "'none'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { 'Content-Security-Policy': policy, ...STATIC_SECURITY_HEADERS };
}
