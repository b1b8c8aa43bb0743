// The script nonce of this response's Content-Security-Policy. Corral's server sets the policy on the request as
// well as the response (src/server/http/security-headers.ts); Next reads it from there for its own scripts and the
// root layout for the app's inline <head> scripts.

/** The `'nonce-…'` source of the policy's script-src (or of default-src when there is no script-src). */
export function nonceFromPolicy(policy: string | null | undefined): string | undefined {
  if (!policy) return undefined;
  const directives = new Map<string, string>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources.join(' '));
  }
  const sources = directives.get('script-src') ?? directives.get('default-src') ?? '';
  return /'nonce-([A-Za-z0-9+/_=-]+)'/.exec(sources)?.[1];
}
