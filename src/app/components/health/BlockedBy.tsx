'use client';
// A disabled control's link to the doctor row that explains it: "snapshots need the Snapshot feature gate — fix".
import Link from 'next/link';
import type { z } from 'zod';
import type { Blocker, Feature } from '@/server/schemas/doctor';
import type { ActionState } from '../../lib/status';
import { useSession } from '../../lib/session';
import './health.css';

type BlockerRow = z.infer<typeof Blocker>;

/** The first failing check that turns `feature` off, from /api/capabilities; undefined when none does. */
export function useBlocker(feature: z.infer<typeof Feature>): BlockerRow | undefined {
  return useSession().capabilities?.blocked.find((b) => b.feature === feature);
}

export function BlockedBy({ blocker, what, id }: { blocker: BlockerRow; what: string; id?: string }) {
  return (
    <span className="why-hint why-doctor" id={id} data-testid={`blocked-${blocker.feature}`}>
      {what} are off: {blocker.reason.replace(/:.*$/, '')} —
      <Link href={`/health#check-${blocker.check}`} className="why-fix">
        fix
      </Link>
    </span>
  );
}

/** An enabled control a failing doctor check turns off: disabled with the check's reason (the hint links to its row). */
export function gated(state: ActionState, blocker: BlockerRow | undefined): ActionState {
  return blocker && state.enabled ? { enabled: false, reason: blocker.reason } : state;
}

/** The hint under a disabled control: the doctor's "… are off: reason — fix" when a check explains it. */
export function WhyOrBlocked({
  state,
  blocker,
  what,
}: {
  state: ActionState;
  blocker: BlockerRow | undefined;
  what: string;
}) {
  if (state.enabled) return null;
  // The plain hint is WhyHint's (vm/SnapshotsTab), spelled here so the two files do not import each other.
  return blocker ? <BlockedBy blocker={blocker} what={what} /> : <span className="why-hint">{state.reason}</span>;
}
