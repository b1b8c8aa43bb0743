import { Suspense } from 'react';
import { VmView } from '../../../components/vm/VmView';

export default function VmPage() {
  // useSearchParams (the ?tab= selector) needs a Suspense boundary in the App Router.
  return (
    <Suspense fallback={<div className="skeleton workbench">Loading…</div>}>
      <VmView />
    </Suspense>
  );
}
