'use client';
// One console connection with the reconnect policy shared by the Console tab, the Terminal tab and Multiview
// tiles: drops are retried with backoff; "taken over" and "in use" wait for an explicit Take over; refusals and a
// stopped VM stop (a stopped VM is retried when it runs again, because `enabled` flips).
import { useCallback, useEffect, useRef, useState } from 'react';
import { backoffDelay, classifyClose, consoleUrl, type CloseVerdict, type ConsoleKind } from './console-link';

export type ConsolePhase = 'connecting' | 'open' | 'waiting' | 'stopped';

export interface ConsoleConnectionState {
  phase: ConsolePhase;
  /** Why the last connection closed (null while the first one is being made or is open). */
  verdict: CloseVerdict | null;
  /** When the next automatic attempt happens (phase 'waiting'). */
  retryAt: number | null;
  /** How many times this console was (re)connected, for keys in the UI. */
  generation: number;
}

export interface ConsoleConnectionOptions {
  kind: ConsoleKind;
  namespace: string;
  name: string;
  /** The kube context (cluster) of the VM; absent: the default cluster. */
  context?: string;
  /** Connect at all (false while the VM is not running or the tab is hidden). */
  enabled: boolean;
  watch?: boolean;
  /** Wires a fresh socket to the viewer; returns how to detach it. Called once per attempt. */
  attach(ws: WebSocket, generation: number): () => void;
}

/** A connection that stayed open this long counts as healthy: the next drop starts the backoff from scratch. */
const HEALTHY_MS = 5000;

export function useConsoleConnection(options: ConsoleConnectionOptions) {
  const { kind, namespace, name, context, enabled, watch } = options;
  const attachRef = useRef(options.attach);
  attachRef.current = options.attach;
  const [state, setState] = useState<ConsoleConnectionState>({
    phase: 'connecting',
    verdict: null,
    retryAt: null,
    generation: 0,
  });
  const [request, setRequest] = useState({ n: 0, takeover: false });
  const attempt = useRef(0);

  useEffect(() => {
    if (!enabled) {
      setState((s) => ({ ...s, phase: 'stopped', retryAt: null }));
      return;
    }
    let disposed = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let current: { ws: WebSocket; detach: () => void } | null = null;
    let generation = 0;

    const open = (takeover: boolean) => {
      generation += 1;
      const myGeneration = generation;
      const ws = new WebSocket(consoleUrl(window.location, kind, namespace, name, { takeover, watch, context }));
      ws.binaryType = 'arraybuffer';
      let openedAt = 0;
      setState((s) => ({ phase: 'connecting', verdict: s.verdict, retryAt: null, generation: s.generation + 1 }));
      ws.addEventListener('open', () => {
        openedAt = Date.now();
        if (!disposed) setState((s) => ({ ...s, phase: 'open', verdict: null }));
      });
      ws.addEventListener('close', (event) => {
        if (disposed || myGeneration !== generation) return;
        current?.detach();
        current = null;
        if (openedAt && Date.now() - openedAt > HEALTHY_MS) attempt.current = 0;
        const verdict = classifyClose(event.code, event.reason);
        if (verdict.kind === 'retry') {
          const delay = backoffDelay(attempt.current++);
          setState((s) => ({ ...s, phase: 'waiting', verdict, retryAt: Date.now() + delay }));
          timer = setTimeout(() => open(false), delay);
        } else {
          setState((s) => ({ ...s, phase: 'stopped', verdict, retryAt: null }));
        }
      });
      current = { ws, detach: attachRef.current(ws, myGeneration) };
    };

    open(request.takeover);
    return () => {
      disposed = true;
      if (timer) clearTimeout(timer);
      current?.detach();
      if (current && current.ws.readyState <= WebSocket.OPEN) current.ws.close(1000, 'viewer closed');
      current = null;
    };
  }, [kind, namespace, name, context, enabled, watch, request]);

  /** Connect again now; with `takeover`, take the console from whoever holds it. */
  const reconnect = useCallback((takeover = false) => {
    attempt.current = 0;
    setRequest((r) => ({ n: r.n + 1, takeover }));
  }, []);

  return { state, reconnect, takeOver: useCallback(() => reconnect(true), [reconnect]) };
}
