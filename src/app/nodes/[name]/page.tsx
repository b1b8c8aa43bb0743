import { Suspense } from 'react';
import { NodeView } from '../../components/node/NodeView';

export default function NodePage() {
  // useSearchParams (the ?context= of another cluster's node) needs a Suspense boundary in the App Router.
  return (
    <Suspense fallback={<div className="skeleton workbench">Loading…</div>}>
      <NodeView />
    </Suspense>
  );
}
