'use client';
// The CT's Terminal tab: a shell in the container over /api/ctty (pods/exec on the server side). Keystrokes go as
// binary frames, the size as a text frame {"cols","rows"} whenever xterm's fit changes it. A close says why
// (the shell exited, taken over, stopped); Reconnect and Take over open a fresh shell.
import type { FitAddon } from '@xterm/addon-fit';
import type { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';
import type { CtRow } from '../../lib/model';
import '@xterm/xterm/css/xterm.css';
import '../console/console.css';

interface Mods {
  Terminal: typeof Terminal;
  FitAddon: typeof FitAddon;
}

export function ctTerminalUrl(
  location: { protocol: string; host: string },
  ns: string,
  name: string,
  takeover: boolean,
  context?: string,
) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const query = new URLSearchParams();
  if (takeover) query.set('takeover', '1');
  // The CT's cluster (absent: the server's default one).
  if (context) query.set('context', context);
  const qs = query.toString();
  return `${scheme}//${location.host}/api/ctty/${encodeURIComponent(ns)}/${encodeURIComponent(name)}${qs ? `?${qs}` : ''}`;
}

export function CtTerminal({ ct, readOnly }: { ct: CtRow; readOnly: boolean }) {
  const hostRef = useRef<HTMLDivElement>(null);
  const [mods, setMods] = useState<Mods | null>(null);
  const [attempt, setAttempt] = useState({ n: 0, takeover: false });
  const [notice, setNotice] = useState<{ text: string; code: number } | null>(null);
  const running = ct.phase === 'Running';

  useEffect(() => {
    let live = true;
    void Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]).then(([x, f]) => {
      if (live) setMods({ Terminal: x.Terminal, FitAddon: f.FitAddon });
    });
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => {
    const host = hostRef.current;
    if (!mods || !host || !running || readOnly) return;
    setNotice(null);
    const term = new mods.Terminal({
      cursorBlink: true,
      scrollback: 10_000,
      fontSize: 14,
      theme: { background: '#0c0c0c' },
    });
    const fit = new mods.FitAddon();
    term.loadAddon(fit);
    term.open(host);
    fit.fit();
    const ws = new WebSocket(ctTerminalUrl(window.location, ct.namespace, ct.name, attempt.takeover, ct.context));
    ws.binaryType = 'arraybuffer';
    const encoder = new TextEncoder();
    const sendSize = () => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ cols: term.cols, rows: term.rows }));
    };
    ws.addEventListener('open', () => {
      sendSize();
      term.focus();
    });
    ws.addEventListener('message', (e: MessageEvent) => {
      term.write(typeof e.data === 'string' ? e.data : new Uint8Array(e.data as ArrayBuffer));
    });
    ws.addEventListener('close', (e) =>
      setNotice({ text: e.reason || `The terminal closed (${e.code})`, code: e.code }),
    );
    const onData = term.onData((d) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
    });
    const onResize = term.onResize(sendSize);
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(host);
    return () => {
      observer.disconnect();
      onData.dispose();
      onResize.dispose();
      ws.close();
      term.dispose();
    };
  }, [mods, running, readOnly, ct.namespace, ct.name, ct.context, attempt]);

  return (
    <section className="panel console-panel" data-testid="ct-terminal">
      <div className="console-toolbar" role="toolbar" aria-label="Terminal controls">
        {!readOnly && running && (
          <button
            type="button"
            className="btn-small"
            onClick={() => setAttempt((a) => ({ n: a.n + 1, takeover: false }))}
          >
            Reconnect
          </button>
        )}
        <span className="page-sub">
          {ct.privileged
            ? 'Shell in the persistent root (chroot /data/rootfs)'
            : 'Shell in the container; /data persists'}
        </span>
      </div>
      {readOnly ? (
        <div className="console-notice error" role="alert">
          Read-only: a CT terminal needs admin rights (your login is not in CORRAL_ADMINS).
        </div>
      ) : !running ? (
        <div className="console-notice" role="status">
          CT {ct.name} is {ct.phase}: start it to open its terminal.
        </div>
      ) : (
        notice && (
          <div
            className={`console-notice${notice.code >= 4000 ? ' error' : ''}`}
            role="status"
            data-testid="ct-terminal-notice"
          >
            {notice.text}{' '}
            {notice.code === 4029 || notice.code === 4001 ? (
              <button
                type="button"
                className="btn-small"
                onClick={() => setAttempt((a) => ({ n: a.n + 1, takeover: true }))}
              >
                Take over
              </button>
            ) : (
              <button
                type="button"
                className="btn-small"
                onClick={() => setAttempt((a) => ({ n: a.n + 1, takeover: false }))}
              >
                New shell
              </button>
            )}
          </div>
        )
      )}
      <div className="terminal-frame">
        <div ref={hostRef} style={{ width: '100%', height: '100%' }} data-testid="ct-terminal-screen" />
      </div>
    </section>
  );
}
