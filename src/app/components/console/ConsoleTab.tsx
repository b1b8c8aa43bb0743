'use client';
// The Console tab: the VM's VNC screen through noVNC over /api/vnc, with scale-to-fit, fullscreen, a key
// combination menu, "type clipboard", reconnect with backoff and Take over when another viewer holds the console.
import type RFB from '@novnc/novnc';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSession } from '../../lib/session';
import type { VmTabProps } from '../vm/tabs';
import { ConsoleHolder } from './ConsoleHolders';
import { ConsoleNotice } from './ConsoleNotice';
import { KEY_COMBOS, comboEvents, textKeysyms } from './keys';
import { useConsoleConnection } from './use-console-connection';
import './console.css';

export function ConsoleTab({ vm, readOnly }: VmTabProps) {
  return (
    <VncConsole namespace={vm.namespace} name={vm.name} context={vm.context} running={vm.running} readOnly={readOnly} />
  );
}

interface VncConsoleProps {
  namespace: string;
  name: string;
  /** The VM's cluster (absent: the default one). */
  context?: string;
  running: boolean;
  readOnly: boolean;
}

export function VncConsole({ namespace, name, context, running, readOnly }: VncConsoleProps) {
  const frameRef = useRef<HTMLDivElement>(null);
  const screenRef = useRef<HTMLDivElement>(null);
  const rfbRef = useRef<RFB | null>(null);
  const [fit, setFit] = useState(true);
  const fitRef = useRef(fit);
  fitRef.current = fit;
  const readOnlyRef = useRef(readOnly);
  readOnlyRef.current = readOnly;
  const [desktop, setDesktop] = useState('');
  const [pasteOpen, setPasteOpen] = useState(false);
  const [actionError, setActionError] = useState('');

  const RFBClass = useNoVnc();
  const { loaded } = useSession();

  const attach = useCallback(
    (ws: WebSocket) => {
      const target = screenRef.current;
      if (!RFBClass || !target) return () => undefined;
      // Attached synchronously, before the socket opens: the server's first bytes must not find no listener.
      target.replaceChildren();
      const rfb = new RFBClass(target, ws, { shared: true });
      rfb.scaleViewport = fitRef.current;
      rfb.clipViewport = !fitRef.current;
      rfb.viewOnly = readOnlyRef.current;
      rfb.focusOnClick = true;
      rfb.background = 'transparent';
      rfb.addEventListener('desktopname', (e) => setDesktop((e as CustomEvent<{ name: string }>).detail.name));
      rfbRef.current = rfb;
      return () => {
        if (rfbRef.current === rfb) rfbRef.current = null;
        try {
          rfb.disconnect();
        } catch {
          // Already disconnected by the socket close.
        }
      };
    },
    // readOnly is read through a ref: whoami answering must not reconnect the console.
    [RFBClass],
  );

  const { state, reconnect, takeOver } = useConsoleConnection({
    kind: 'vnc',
    namespace,
    name,
    context,
    enabled: running && RFBClass !== null,
    attach,
  });

  // Callers count as read-only until whoami answers: unlock the keyboard of the live session when it does.
  useEffect(() => {
    if (rfbRef.current) rfbRef.current.viewOnly = readOnly;
  }, [readOnly]);

  const toggleFit = () => {
    const next = !fit;
    setFit(next);
    if (rfbRef.current) {
      rfbRef.current.scaleViewport = next;
      rfbRef.current.clipViewport = !next;
    }
  };

  const fullscreen = () => {
    const el = frameRef.current;
    if (!el) return;
    if (document.fullscreenElement) void document.exitFullscreen();
    else
      el.requestFullscreen().catch((err: unknown) =>
        setActionError(`Fullscreen refused: ${err instanceof Error ? err.message : String(err)}`),
      );
  };

  const sendCombo = (id: string) => {
    const combo = KEY_COMBOS.find((c) => c.id === id);
    const rfb = rfbRef.current;
    if (!combo || !rfb) return;
    for (const e of comboEvents(combo)) rfb.sendKey(e.keysym, e.code, e.down);
    rfb.focus();
  };

  const typeText = (text: string) => {
    const rfb = rfbRef.current;
    if (!rfb) return;
    for (const keysym of textKeysyms(text)) rfb.sendKey(keysym, null);
    rfb.focus();
  };

  const typeClipboard = async () => {
    setActionError('');
    try {
      const text = await navigator.clipboard.readText();
      typeText(text);
    } catch {
      // No clipboard permission (or an insecure context): let the user paste the text into a box instead.
      setPasteOpen(true);
    }
  };

  const connected = state.phase === 'open';
  return (
    <section className="panel console-panel" data-testid="console-tab">
      <div className="console-toolbar" role="toolbar" aria-label="Console controls">
        <button
          type="button"
          className="btn-small"
          aria-pressed={fit}
          onClick={toggleFit}
          title="Scale the screen to fit the window"
        >
          {fit ? 'Fit: on' : 'Fit: off'}
        </button>
        <button type="button" className="btn-small" onClick={fullscreen} title="Fullscreen (Esc leaves)">
          Fullscreen
        </button>
        {!readOnly && (
          <>
            <select
              aria-label="Send keys"
              className="btn-small"
              value=""
              disabled={!connected}
              title={connected ? 'Send a key combination the browser would keep for itself' : 'Not connected'}
              onChange={(e) => sendCombo(e.target.value)}
              data-testid="console-keys"
            >
              <option value="" disabled>
                Send keys…
              </option>
              {KEY_COMBOS.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.label}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="btn-small"
              disabled={!connected}
              onClick={() => void typeClipboard()}
              title="Type the clipboard text into the guest, key by key"
            >
              Type clipboard
            </button>
          </>
        )}
        <button
          type="button"
          className="btn-small"
          onClick={() => reconnect(false)}
          title="Close and open the console again"
        >
          Reconnect
        </button>
        <span className="header-spacer" />
        {desktop && <span className="console-desktop">{desktop}</span>}
        <ConsoleHolder namespace={namespace} name={name} context={context} kind="vnc" />
      </div>
      <ConsoleNotice
        state={state}
        running={running}
        canTakeOver={!readOnly}
        onTakeOver={takeOver}
        onReconnect={() => reconnect(false)}
      />
      {readOnly && loaded && (
        <div className="console-notice">
          Read-only: you can watch this console; your keyboard and mouse are not sent.
        </div>
      )}
      {actionError && (
        <div className="console-notice error" role="alert">
          {actionError}
        </div>
      )}
      {pasteOpen && (
        <PasteBox
          onType={(t) => {
            typeText(t);
            setPasteOpen(false);
          }}
          onCancel={() => setPasteOpen(false)}
        />
      )}
      <div ref={frameRef} className={`console-frame${fit ? ' fit' : ''}`} data-state={state.phase}>
        <div ref={screenRef} className="console-screen" data-testid="vnc-screen" />
      </div>
    </section>
  );
}

type RfbClass = typeof RFB;

/** noVNC touches `window` when imported: load it in the browser only, once. */
export function useNoVnc(): RfbClass | null {
  const [cls, setCls] = useState<RfbClass | null>(null);
  useEffect(() => {
    let live = true;
    void import('@novnc/novnc').then((mod) => {
      if (live) setCls(() => mod.default);
    });
    return () => {
      live = false;
    };
  }, []);
  return cls;
}

function PasteBox({ onType, onCancel }: { onType(text: string): void; onCancel(): void }) {
  const [text, setText] = useState('');
  return (
    <div className="console-paste">
      <label>
        The browser did not allow reading the clipboard. Paste the text here to type it into the guest:
        <textarea value={text} onChange={(e) => setText(e.target.value)} rows={3} autoFocus />
      </label>
      <div className="console-paste-actions">
        <button type="button" className="btn-primary btn-small" disabled={!text} onClick={() => onType(text)}>
          Type it
        </button>
        <button type="button" className="btn-small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
