/**
 * Cross-site request refusal for state-changing requests. Browsers send Sec-Fetch-Site and Origin; a forged
 * cross-site form cannot set `Content-Type: application/json` without a CORS preflight (which Corral never grants),
 * so requiring a JSON body plus a same-origin (or header-less, non-browser) request closes CSRF.
 */
import type { IncomingHttpHeaders } from 'node:http';

const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim();

export function crossSiteRefusal(headers: IncomingHttpHeaders): string | undefined {
  const site = first(headers['sec-fetch-site']).toLowerCase();
  if (site && site !== 'same-origin' && site !== 'none') return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  const origin = first(headers.origin);
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return 'cross-site request refused (malformed Origin)';
    }
    const host = first(headers['x-forwarded-host']) || first(headers.host);
    if (originHost.toLowerCase() !== host.toLowerCase())
      return `cross-site request refused (Origin ${origin} is not ${host})`;
  } else if (origin === 'null') {
    return 'cross-site request refused (opaque Origin)';
  }
  // The media type exactly (parameters such as charset allowed): `application/jsonx` is not JSON.
  const type = (first(headers['content-type']).split(';')[0] ?? '').trim().toLowerCase();
  if (type !== 'application/json') return 'state-changing requests need a JSON body (Content-Type: application/json)';
  return undefined;
}
