import { describe, expect, it } from 'vitest';
import { checkOrigin } from './origin.js';

describe('checkOrigin', () => {
  it('accepts the same origin, including default ports and case', () => {
    expect(checkOrigin({ host: 'localhost:8006', origin: 'http://localhost:8006' })).toEqual({ ok: true });
    expect(checkOrigin({ host: 'Corral.example.ts.net', origin: 'https://corral.example.ts.net:443' })).toEqual({
      ok: true,
    });
  });

  it('refuses another site, another port, and a scheme that is not http(s)', () => {
    const evil = checkOrigin({ host: 'localhost:8006', origin: 'http://evil.example' });
    expect(evil.ok).toBe(false);
    expect(!evil.ok && evil.reason).toMatch(/Origin http:\/\/evil\.example does not match host localhost:8006/);
    expect(checkOrigin({ host: 'localhost:8006', origin: 'http://localhost:3000' }).ok).toBe(false);
    expect(checkOrigin({ host: 'localhost:8006', origin: 'null' }).ok).toBe(false);
    expect(checkOrigin({ host: 'localhost:8006', origin: 'file://localhost:8006' }).ok).toBe(false);
  });

  it('allows non-browser clients that send no Origin', () => {
    expect(checkOrigin({ host: 'localhost:8006' })).toEqual({ ok: true });
  });

  it('uses X-Forwarded-Host only when told to trust it', () => {
    const headers = { host: '10.0.0.5:8006', origin: 'https://corral.ts.net', 'x-forwarded-host': 'corral.ts.net' };
    expect(checkOrigin(headers).ok).toBe(false);
    expect(checkOrigin(headers, { trustForwardedHost: true })).toEqual({ ok: true });
  });

  it('accepts explicitly allowed origins', () => {
    expect(
      checkOrigin(
        { host: 'localhost:8006', origin: 'http://127.0.0.1:8006' },
        { allowedOrigins: ['http://127.0.0.1:8006'] },
      ),
    ).toEqual({ ok: true });
  });
});
