'use client';
// A value that follows another only after the browser has painted the frame showing the change. React's
// useDeferredValue renders the deferred value in a task of its own right after the urgent render — often before
// the next frame, so the keystroke's frame also lays out and paints the table's new rows. Following after the
// paint keeps the key's own frame small (the box and little else); the table comes in the frame after.
import { startTransition, useEffect, useState } from 'react';
import { postTask } from './sliced';

/** `value`, once the frame after its change has been painted (as a transition: a newer value interrupts it). */
export function useValueAfterPaint<T>(value: T): T {
  const [shown, setShown] = useState(value);
  useEffect(() => {
    if (Object.is(shown, value)) return;
    let cancelled = false;
    // rAF runs as the next frame begins; a task posted from it runs once that frame is painted.
    const frame = requestAnimationFrame(() =>
      postTask(() => {
        if (!cancelled) startTransition(() => setShown(value));
      }),
    );
    return () => {
      cancelled = true;
      cancelAnimationFrame(frame);
    };
  }, [value, shown]);
  return shown;
}
