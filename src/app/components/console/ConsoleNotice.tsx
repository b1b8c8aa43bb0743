'use client';
// The line above a console that says what is going on and offers the one sensible next step.
import type { ConsoleConnectionState } from './use-console-connection';

export interface ConsoleNoticeProps {
  state: ConsoleConnectionState;
  running: boolean;
  /** Read-only callers cannot take a console over. */
  canTakeOver: boolean;
  onTakeOver(): void;
  onReconnect(): void;
}

export function ConsoleNotice({ state, running, canTakeOver, onTakeOver, onReconnect }: ConsoleNoticeProps) {
  const { phase, verdict } = state;
  if (!running) {
    return (
      <div className="console-notice" role="status" data-testid="console-notice">
        The VM is not running. Start it to use its console.
      </div>
    );
  }
  if (phase === 'open') return null;
  if (phase === 'connecting') {
    return (
      <div className="console-notice" role="status" data-testid="console-notice">
        Connecting…
      </div>
    );
  }
  if (!verdict) return null;
  const takeOver = canTakeOver && (verdict.kind === 'taken-over' || verdict.kind === 'in-use');
  const tone =
    verdict.kind === 'refused'
      ? 'console-notice error'
      : verdict.kind === 'retry'
        ? 'console-notice'
        : 'console-notice warn';
  return (
    <div className={tone} role="alert" data-testid="console-notice" data-verdict={verdict.kind}>
      <span>
        {verdict.message}
        {phase === 'waiting' && state.retryAt
          ? ` — reconnecting in ${Math.max(1, Math.round((state.retryAt - Date.now()) / 1000))} s…`
          : ''}
      </span>
      <span className="header-spacer" />
      {takeOver && (
        <button type="button" className="btn-primary btn-small" onClick={onTakeOver} data-testid="console-takeover">
          Take over
        </button>
      )}
      {!takeOver && verdict.kind !== 'refused' && (
        <button type="button" className="btn-small" onClick={onReconnect}>
          Reconnect now
        </button>
      )}
    </div>
  );
}
