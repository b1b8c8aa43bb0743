'use client';
// "Held by Alice since 10:02": who holds this VM's console, from the server's session registry.
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../../lib/trpc';
import { useSession } from '../../lib/session';
import { inContext } from '../../lib/cluster-links';

export function ConsoleHolder({
  namespace,
  name,
  context,
  kind,
}: {
  namespace: string;
  name: string;
  context?: string;
  kind: 'vnc' | 'serial';
}) {
  const trpc = useTRPC();
  const session = useSession();
  const sessions = useQuery({
    ...trpc.consoles.sessions.queryOptions({ namespace, name, ...inContext(context) }),
    refetchInterval: 3000,
  });
  const holder = sessions.data?.[kind];
  if (!holder)
    return (
      <span className="console-holder" data-testid="console-holder">
        Nobody holds this console
      </span>
    );
  const since = new Date(holder.since).toLocaleTimeString();
  const who = holder.login === session.login ? `${holder.displayName} (you)` : holder.displayName;
  return (
    <span
      className="console-holder"
      data-testid="console-holder"
      title={`${holder.login}${holder.readOnly ? ', watching only' : ''}`}
    >
      Held by {who}
      {holder.readOnly ? ' (watching)' : ''} since {since}
    </span>
  );
}
