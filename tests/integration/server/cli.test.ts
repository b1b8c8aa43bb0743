/** `corral web` on the command line: --help, and usage errors that exit 2 without a stack trace. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

function corral(...args: string[]) {
  return spawnSync(`${root}node_modules/.bin/node`, ['bin/corral.mjs', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('corral web', () => {
  it('prints its usage for --help and exits 0', () => {
    const r = corral('web', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: corral web');
    expect(r.stdout).toContain('--open');
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--port'], /--port/],
    [['--port', 'eighty'], /--port: not a port number/],
    [['--cert', 'only.pem'], /--cert and --key go together/],
    [['stray'], /positional/i],
  ])('refuses %j with usage and exit 2', (args, message) => {
    const r = corral('web', ...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('usage: corral web');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
