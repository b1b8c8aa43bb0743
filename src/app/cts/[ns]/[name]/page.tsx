import { Suspense } from 'react';
import { CtView } from '../../../components/ct/CtView';

export default function CtPage() {
  // useSearchParams (the ?tab= selector) needs a Suspense boundary in the App Router.
  return (
    <Suspense fallback={<div className="skeleton workbench">Loading…</div>}>
      <CtView />
    </Suspense>
  );
}
