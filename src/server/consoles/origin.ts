/**
 * Cross-site WebSocket protection. Browsers send cookies/ingress identity with WebSocket upgrades from any site
 * and the same-origin policy does not apply to them, so the Origin header is the only thing telling a page on
 * evil.example apart from Corral's own UI. A browser always sends Origin on upgrades; tools (websocat, the SDK,
 * tests) send none and are not a cross-site risk, so a missing Origin is allowed.
 */
import type { IncomingHttpHeaders } from 'node:http';

export type OriginVerdict = { ok: true } | { ok: false; reason: string };

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Host with the default port of its scheme removed, lower-cased (so `Example.com:443` equals `example.com`). */
function normaliseHost(host: string, scheme: 'http' | 'https'): string {
  const lower = host.trim().toLowerCase();
  const defaultPort = scheme === 'https' ? ':443' : ':80';
  return lower.endsWith(defaultPort) ? lower.slice(0, -defaultPort.length) : lower;
}

export function checkOrigin(
  headers: IncomingHttpHeaders,
  options: { trustForwardedHost?: boolean; allowedOrigins?: string[] } = {},
): OriginVerdict {
  const origin = firstHeader(headers.origin);
  if (origin === undefined) return { ok: true };
  if (options.allowedOrigins?.includes(origin)) return { ok: true };
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return { ok: false, reason: `Cross-site console connection refused: malformed Origin ${JSON.stringify(origin)}` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return {
      ok: false,
      reason: `Cross-site console connection refused: Origin ${origin} is not a web page of this server`,
    };
  }
  // Behind the Tailscale ingress / a reverse proxy the browser's Host is in X-Forwarded-Host.
  const forwarded = options.trustForwardedHost ? firstHeader(headers['x-forwarded-host'])?.split(',')[0] : undefined;
  const host = forwarded ?? firstHeader(headers.host);
  if (!host) return { ok: false, reason: 'Cross-site console connection refused: the request has no Host header' };
  const scheme = parsed.protocol === 'https:' ? 'https' : 'http';
  if (normaliseHost(parsed.host, scheme) !== normaliseHost(host, scheme)) {
    return { ok: false, reason: `Cross-site console connection refused: Origin ${origin} does not match host ${host}` };
  }
  return { ok: true };
}
