import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  applySecurityHeaders,
  contentSecurityPolicy,
  createNonce,
  staticPageSecurityHeaders,
} from './security-headers';

/** Directive name → its sources. */
function parse(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(';').map((d) => {
      const [name = '', ...sources] = d.trim().split(/\s+/);
      return [name, sources];
    }),
  );
}

describe('contentSecurityPolicy', () => {
  it('allows scripts by nonce only, never eval or inline, in production', () => {
    const p = parse(contentSecurityPolicy({ nonce: 'n0nce', host: 'corral.lan:8006' }));
    expect(p.get('script-src')).toEqual(["'self'", "'nonce-n0nce'", "'strict-dynamic'"]);
    expect(p.get('frame-ancestors')).toEqual(["'none'"]);
    expect(p.get('object-src')).toEqual(["'none'"]);
    expect(p.get('base-uri')).toEqual(["'none'"]);
    expect(p.get('connect-src')).toEqual(["'self'", 'ws://corral.lan:8006', 'wss://corral.lan:8006']);
  });

  it("adds 'unsafe-eval' in dev mode only", () => {
    expect(parse(contentSecurityPolicy({ nonce: 'x', dev: true })).get('script-src')).toContain("'unsafe-eval'");
  });

  it('ignores a Host that could inject sources or directives', () => {
    for (const host of ['evil.com; script-src *', 'a b', "x'y", 'a.com/path', '']) {
      const p = parse(contentSecurityPolicy({ nonce: 'x', host }));
      expect(p.get('connect-src')).toEqual(["'self'"]);
      expect(p.get('script-src')).toEqual(["'self'", "'nonce-x'", "'strict-dynamic'"]);
    }
    expect(parse(contentSecurityPolicy({ nonce: 'x', host: '[::1]:8006' })).get('connect-src')).toContain(
      'ws://[::1]:8006',
    );
  });

  it('makes a fresh 128-bit nonce each time', () => {
    const a = createNonce();
    expect(Buffer.from(a, 'base64')).toHaveLength(16);
    expect(createNonce()).not.toBe(a);
  });
});

describe('applySecurityHeaders', () => {
  let server: Server;
  let url = '';
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      applySecurityHeaders(req, res);
      seen.push(req.headers['content-security-policy'] as string | undefined);
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sets the headers on the response and the same policy on the request, replacing a client-sent one', async () => {
    const res = await fetch(url, { headers: { 'content-security-policy': "script-src 'nonce-chosen'" } });
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{24}' 'strict-dynamic'/);
    expect(policy).not.toContain('chosen');
    expect(seen.at(-1)).toBe(policy);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('permissions-policy')).toContain('camera=()');
    const again = await fetch(url);
    expect(again.headers.get('content-security-policy')).not.toBe(policy);
  });
});

describe('staticPageSecurityHeaders', () => {
  it('allows exactly the given inline scripts by hash, and nothing when there are none', () => {
    const script = "document.title='x'";
    const sha = createHash('sha256').update(script).digest('base64');
    const h = staticPageSecurityHeaders([script]);
    expect(parse(h['Content-Security-Policy']!).get('script-src')).toEqual([`'sha256-${sha}'`]);
    expect(h['X-Frame-Options']).toBe('DENY');
    expect(parse(staticPageSecurityHeaders([])['Content-Security-Policy']!).get('script-src')).toEqual(["'none'"]);
  });
});
