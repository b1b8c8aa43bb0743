/**
 * Who holds each console. KubeVirt allows one VNC and one serial connection per VMI (a new one silently kicks
 * the old one); Corral records every session it bridges so it can say who holds a console, refuse to steal it
 * unless asked, and tell the previous viewer who took it over.
 */
export type ConsoleKind = 'vnc' | 'serial';

export interface ConsoleHolder {
  id: string;
  kind: ConsoleKind;
  namespace: string;
  name: string;
  /** The kube context the VM is on (with several clusters a namespace/name can exist in each). */
  context?: string;
  login: string;
  displayName: string;
  /** Read-only watchers (VNC with input dropped). */
  readOnly: boolean;
  /** ISO timestamp of when the session started. */
  since: string;
}

export interface ConsoleSession extends ConsoleHolder {
  /** Ends the session's bridge, telling its browser why. */
  end(code: number, reason: string): void;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, ConsoleSession>();
  /** Sessions replaced by a take-over, with who took them (read by the old bridge when its upstream closes). */
  private readonly supersededBy = new Map<string, ConsoleHolder>();

  private static key(kind: ConsoleKind, namespace: string, name: string, context = ''): string {
    return `${kind}:${context}:${namespace}/${name}`;
  }

  holder(kind: ConsoleKind, namespace: string, name: string, context?: string): ConsoleHolder | null {
    const s = this.sessions.get(SessionRegistry.key(kind, namespace, name, context));
    return s ? toHolder(s) : null;
  }

  /** All current holders, optionally of one VM. */
  list(filter?: { namespace: string; name: string }): ConsoleHolder[] {
    const out: ConsoleHolder[] = [];
    for (const s of this.sessions.values()) {
      if (!filter || (s.namespace === filter.namespace && s.name === filter.name)) out.push(toHolder(s));
    }
    return out;
  }

  /** Records `session` as the holder of its console; returns the session it replaces (the caller ends it). */
  claim(session: ConsoleSession): ConsoleSession | null {
    const key = SessionRegistry.key(session.kind, session.namespace, session.name, session.context);
    const previous = this.sessions.get(key) ?? null;
    if (previous) this.supersededBy.set(previous.id, toHolder(session));
    this.sessions.set(key, session);
    return previous;
  }

  /** Forgets `session` if it still holds its console (a session that was taken over no longer does). */
  release(session: ConsoleHolder): void {
    const key = SessionRegistry.key(session.kind, session.namespace, session.name, session.context);
    if (this.sessions.get(key)?.id === session.id) this.sessions.delete(key);
    this.supersededBy.delete(session.id);
  }

  /** The holder that took over session `id`, if it was taken over. */
  takenOverBy(id: string): ConsoleHolder | null {
    return this.supersededBy.get(id) ?? null;
  }
}

function toHolder(s: ConsoleHolder): ConsoleHolder {
  return {
    id: s.id,
    kind: s.kind,
    namespace: s.namespace,
    name: s.name,
    ...(s.context !== undefined ? { context: s.context } : {}),
    login: s.login,
    displayName: s.displayName,
    readOnly: s.readOnly,
    since: s.since,
  };
}
