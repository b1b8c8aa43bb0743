/**
 * Runs npm scripts side by side and fails if any fails: `node --import tsx scripts/parallel.ts typecheck lint`.
 * `npm test` checks types and lint this way — each is mostly one core's work, and on a 2-core machine running them
 * one after the other left a core idle for two minutes of the suite's twenty. Each script's output is held and
 * printed whole when it ends, so the two never interleave.
 */
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: parallel.ts <npm script>...');
  process.exit(2);
}

function run(script: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => out.push(d));
    child.on('error', (err) => out.push(Buffer.from(`${err.message}\n`)));
    child.on('close', (code, signal) => {
      const status = code ?? (signal ? 128 : 1);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(
        `\n> ${script} ${status === 0 ? 'passed' : `failed (exit ${code ?? signal})`} in ${seconds} s\n`,
      );
      process.stdout.write(Buffer.concat(out));
      resolve(status);
    });
  });
}

const codes = await Promise.all(scripts.map(run));
process.exit(codes.find((c) => c !== 0) ?? 0);
