// Which rows of a list of equally tall rows to render: those in the viewport plus `overscan` on each side. With
// one fixed row height this is arithmetic — no row is measured, and a new row count costs nothing per row (a
// general virtualizer keeps a measurement per row and rebuilds them when the count changes: 50,000 per keystroke).

/** Rows [start, end) to render when the viewport shows `height` px from `top` px of the rows. */
export function rowWindow(
  top: number,
  height: number,
  rowHeight: number,
  count: number,
  overscan: number,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, top) / rowHeight);
  const last = Math.ceil((Math.max(0, top) + Math.max(0, height)) / rowHeight);
  const end = Math.min(count, last + overscan);
  // Scrolled past the end (the rows just got fewer; the browser clamps scrollTop next): show the last rows.
  const start = Math.max(0, Math.min(first, count - (last - first)) - overscan);
  return { start, end };
}
