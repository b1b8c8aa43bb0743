'use client';
// The Datacenter's first rows come in the server-rendered HTML (docs/scale.md, "First rows from the HTML"), so its
// filter boxes are on screen, and can be typed into, before the page's scripts have hydrated them. React keeps what
// was typed in the box at hydration (it does not overwrite a live input's value) but its state still holds the
// server's value, so the next render would put that back and the keys would be lost. This adopts them once, right
// after hydration.
import { useEffect, useRef, type RefObject } from 'react';

/** A ref for a controlled text input; after the first commit, text typed into it before hydration becomes `value`. */
export function useTypedBeforeHydration(
  value: string,
  setValue: (typed: string) => void,
): RefObject<HTMLInputElement | null> {
  const ref = useRef<HTMLInputElement | null>(null);
  const first = useRef({ value, setValue });
  useEffect(() => {
    const typed = ref.current?.value;
    if (typed !== undefined && typed !== first.current.value) first.current.setValue(typed);
  }, []);
  return ref;
}
