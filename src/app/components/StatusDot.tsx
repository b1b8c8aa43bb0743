import { statusTone } from '../lib/status';

/** A coloured dot with the status as its accessible name (colour alone never carries the meaning). */
export function StatusDot({ status }: { status: string }) {
  return (
    <span className={`dot dot-${statusTone(status)}`} role="img" aria-label={status || 'Stopped'} title={status} />
  );
}

export function NodeDot({ ready }: { ready: boolean }) {
  return (
    <span
      className={`dot ${ready ? 'dot-ready' : 'dot-notready'}`}
      role="img"
      aria-label={ready ? 'Ready' : 'Not ready'}
      title={ready ? 'Ready' : 'Not ready'}
    />
  );
}
