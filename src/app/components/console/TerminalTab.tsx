'use client';
// The Terminal tab: the VM's serial console in xterm.js over /api/tty. On open the server first sends the serial
// output it retained (up to 256 KiB), so a boot log is there even if nobody watched; it can be downloaded too.
import type { FitAddon } from '@xterm/addon-fit';
import type { Terminal } from '@xterm/xterm';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSession } from '../../lib/session';
import { useTRPCClient } from '../../lib/trpc';
import type { VmTabProps } from '../vm/tabs';
import { ConsoleHolder } from './ConsoleHolders';
import { ConsoleNotice } from './ConsoleNotice';
import { useConsoleConnection } from './use-console-connection';
import '@xterm/xterm/css/xterm.css';
import './console.css';
import { vmRef } from '../../lib/cluster-links';

interface XtermModules {
  Terminal: typeof Terminal;
  FitAddon: typeof FitAddon;
}

/** xterm.js needs `window`: load it in the browser only. */
function useXterm(): XtermModules | null {
  const [mods, setMods] = useState<XtermModules | null>(null);
  useEffect(() => {
    let live = true;
    void Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]).then(([x, f]) => {
      if (live) setMods({ Terminal: x.Terminal, FitAddon: f.FitAddon });
    });
    return () => {
      live = false;
    };
  }, []);
  return mods;
}

export function TerminalTab({ vm, readOnly }: VmTabProps) {
  const client = useTRPCClient();
  // readOnly is true until whoami answers; only explain a refusal once we know.
  const { loaded } = useSession();
  const mods = useXterm();
  const hostRef = useRef<HTMLDivElement>(null);
  const termRef = useRef<Terminal | null>(null);
  const fitRef = useRef<FitAddon | null>(null);
  const socketRef = useRef<WebSocket | null>(null);
  const [downloadError, setDownloadError] = useState('');

  // One xterm per tab visit; connections come and go underneath it.
  useEffect(() => {
    const host = hostRef.current;
    if (!mods || !host) return;
    const term = new mods.Terminal({
      convertEol: false,
      cursorBlink: true,
      scrollback: 10_000,
      fontSize: 14,
      theme: { background: '#0c0c0c' },
    });
    const fit = new mods.FitAddon();
    term.loadAddon(fit);
    term.open(host);
    fit.fit();
    const encoder = new TextEncoder();
    // Always binary frames: KubeVirt's console ignores text frames.
    const send = (data: string | Uint8Array<ArrayBuffer>) => {
      const ws = socketRef.current;
      if (ws?.readyState === WebSocket.OPEN) ws.send(typeof data === 'string' ? encoder.encode(data) : data);
    };
    const onData = term.onData((d) => send(d));
    const onBinary = term.onBinary((d) => send(Uint8Array.from(d, (c) => c.charCodeAt(0))));
    // Ctrl+Shift+C / Ctrl+Shift+V copy and paste (plain Ctrl+C must stay an interrupt for the guest).
    term.attachCustomKeyEventHandler((e) => {
      if (e.type !== 'keydown' || !e.ctrlKey || !e.shiftKey) return true;
      if (e.code === 'KeyC') {
        const selection = term.getSelection();
        if (selection) void navigator.clipboard?.writeText(selection);
        return false;
      }
      if (e.code === 'KeyV') {
        void navigator.clipboard?.readText().then((t) => term.paste(t));
        return false;
      }
      return true;
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(host);
    termRef.current = term;
    fitRef.current = fit;
    return () => {
      observer.disconnect();
      onData.dispose();
      onBinary.dispose();
      term.dispose();
      termRef.current = null;
      fitRef.current = null;
    };
  }, [mods]);

  const attach = useCallback((ws: WebSocket) => {
    const term = termRef.current;
    socketRef.current = ws;
    // Every connection starts with the retained log, so start from a clean screen rather than printing it twice.
    term?.reset();
    const onMessage = (e: MessageEvent) => {
      const t = termRef.current;
      if (!t) return;
      if (typeof e.data === 'string') t.write(e.data);
      else t.write(new Uint8Array(e.data as ArrayBuffer));
    };
    ws.addEventListener('message', onMessage);
    ws.addEventListener('open', () => termRef.current?.focus());
    return () => {
      ws.removeEventListener('message', onMessage);
      if (socketRef.current === ws) socketRef.current = null;
    };
  }, []);

  const { state, reconnect, takeOver } = useConsoleConnection({
    kind: 'serial',
    ...vmRef(vm),
    // Read-only callers get no serial terminal: do not even try (the server would refuse with 4003).
    enabled: vm.running && mods !== null && !readOnly,
    attach,
  });

  const download = async () => {
    setDownloadError('');
    try {
      const log = await client.consoles.serialLog.query({ ...vmRef(vm), format: 'base64' });
      const bytes = Uint8Array.from(atob(log.log), (c) => c.charCodeAt(0));
      const url = URL.createObjectURL(new Blob([bytes], { type: 'text/plain' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${vm.namespace}-${vm.name}-serial.log`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setDownloadError(`Could not download the serial log: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const copySelection = () => {
    const text = termRef.current?.getSelection();
    if (text) void navigator.clipboard?.writeText(text);
  };
  const paste = async () => {
    try {
      termRef.current?.paste(await navigator.clipboard.readText());
    } catch {
      setDownloadError('The browser did not allow reading the clipboard; use Ctrl+Shift+V or the context menu.');
    }
  };

  return (
    <section className="panel console-panel" data-testid="terminal-tab">
      <div className="console-toolbar" role="toolbar" aria-label="Terminal controls">
        <button
          type="button"
          className="btn-small"
          onClick={copySelection}
          title="Copy the selected text (Ctrl+Shift+C)"
        >
          Copy
        </button>
        {!readOnly && (
          <button
            type="button"
            className="btn-small"
            disabled={state.phase !== 'open'}
            onClick={() => void paste()}
            title="Paste the clipboard (Ctrl+Shift+V)"
          >
            Paste
          </button>
        )}
        <button
          type="button"
          className="btn-small"
          onClick={() => fitRef.current?.fit()}
          title="Fit the terminal to the window"
        >
          Fit
        </button>
        <button
          type="button"
          className="btn-small"
          onClick={() => void download()}
          title="Download the last 256 KiB of serial output Corral relayed"
          data-testid="serial-download"
        >
          Download log
        </button>
        {!readOnly && (
          <button type="button" className="btn-small" onClick={() => reconnect(false)}>
            Reconnect
          </button>
        )}
        <span className="header-spacer" />
        <ConsoleHolder namespace={vm.namespace} name={vm.name} context={vm.context} kind="serial" />
      </div>
      {readOnly && loaded ? (
        <div className="console-notice error" role="alert" data-testid="console-notice">
          Read-only: the serial console needs admin rights (your login is not in CORRAL_ADMINS). You can still download
          the retained log.
        </div>
      ) : readOnly ? null : (
        <ConsoleNotice
          state={state}
          running={vm.running}
          canTakeOver
          onTakeOver={takeOver}
          onReconnect={() => reconnect(false)}
        />
      )}
      {downloadError && (
        <div className="console-notice error" role="alert">
          {downloadError}
        </div>
      )}
      <div className="terminal-frame">
        <div ref={hostRef} style={{ width: '100%', height: '100%' }} data-testid="terminal-screen" />
      </div>
    </section>
  );
}
