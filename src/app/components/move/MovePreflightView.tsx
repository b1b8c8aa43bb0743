'use client';
// The move dialog's live preflight (MoveDialog.tsx): refusals with their remedies first (they keep Move disabled),
// then the warnings, what stays behind, and the steps the commit will take.
import type { MovePreflight } from '@/server/schemas/move';

export function MovePreflightView({ answer, pending }: { answer: MovePreflight | undefined; pending: boolean }) {
  if (!answer)
    return (
      <div className="move-preflight page-sub" role="status" data-testid="move-preflight">
        {pending ? 'Checking the move…' : 'Fill in the destination to check the move.'}
      </div>
    );
  return (
    <div className="move-preflight" role="status" aria-busy={pending} data-testid="move-preflight">
      {answer.ok ? (
        <div className="move-ok" data-testid="move-ok">
          ✓ Ready to move to {answer.plan.destination.context}:{' '}
          {answer.plan.destination.backend === 'pve'
            ? `${answer.plan.destination.name} on node ${answer.plan.destination.node ?? '?'}`
            : `${answer.plan.destination.namespace}/${answer.plan.destination.name}`}
        </div>
      ) : (
        <section aria-label="Refused">
          <h3 className="move-head move-refused">Refused</h3>
          <ul className="move-list" data-testid="move-refusals">
            {answer.refusals.map((r) => (
              <li key={r.reason}>
                <span>{r.reason}</span>
                <span className="page-sub"> — {r.remedy}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {answer.warnings.length > 0 && (
        <section aria-label="Warnings">
          <h3 className="move-head">Warnings</h3>
          <ul className="move-list" data-testid="move-warnings">
            {answer.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </section>
      )}
      {answer.dropped.length > 0 && (
        <section aria-label="Not carried over">
          <h3 className="move-head">Not carried over</h3>
          <ul className="move-list" data-testid="move-dropped">
            {answer.dropped.map((d) => (
              <li key={d}>{d}</li>
            ))}
          </ul>
        </section>
      )}
      <details>
        <summary>Steps ({answer.plan.steps.length})</summary>
        <ol className="move-list">
          {answer.plan.steps.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ol>
      </details>
    </div>
  );
}
