import { describe, expect, it } from 'vitest';
import { hashPassword, sha512CryptDigest } from './sha-crypt';
import { passwordMatches } from '../sim/kubevirt/cloud-init';

describe('SHA-512 crypt shared by Corral and the embedded guests', () => {
  it('honours an explicit rounds count (glibc test vector, rounds=10000)', () => {
    expect(sha512CryptDigest('Hello world!', 'saltstringsaltstring', 10000)).toBe(
      'OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.',
    );
  });

  it('a guest accepts the password Corral hashed and nothing else', () => {
    const hash = hashPassword('correct horse');
    expect(passwordMatches(hash, 'correct horse')).toBe(true);
    expect(passwordMatches(hash, 'correct horse ')).toBe(false);
    const vector =
      '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.';
    expect(passwordMatches(vector, 'Hello world!')).toBe(true);
    expect(passwordMatches(vector, 'Hello world')).toBe(false);
  });
});
