import { describe, expect, it } from 'vitest';
import { nonceFromPolicy } from './csp';

describe('nonceFromPolicy', () => {
  it('reads the script-src nonce', () => {
    expect(nonceFromPolicy("default-src 'self'; script-src 'self' 'nonce-AbC+/9=' 'strict-dynamic'")).toBe('AbC+/9=');
  });

  it('falls back to default-src and ignores other directives', () => {
    expect(nonceFromPolicy("style-src 'nonce-style'; default-src 'nonce-def'")).toBe('def');
    expect(nonceFromPolicy("style-src 'nonce-style'; script-src 'self'")).toBeUndefined();
  });

  it('gives undefined without a policy or a nonce', () => {
    expect(nonceFromPolicy(null)).toBeUndefined();
    expect(nonceFromPolicy('')).toBeUndefined();
    expect(nonceFromPolicy("script-src 'nonce-<bad>'")).toBeUndefined();
  });
});
