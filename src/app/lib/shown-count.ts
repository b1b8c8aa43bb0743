// The count beside the Datacenter's filter box.

/**
 * Every guest, or how many rows the filter shows of how many. `whole` is the whole fleet's count while only the
 * first page of it is held (the rest still loading, docs/scale.md "First rows from the HTML"): a filter typed then
 * has searched only the rows held, which is said, rather than "3 of 60" in a fleet of 50,000.
 */
export function shownCount(shown: number, held: number, filtered: boolean, whole?: number): string {
  if (whole !== undefined && whole > held)
    return filtered ? `${shown} of the first ${held}; the rest are loading` : `${whole}`;
  return shown === held ? `${held}` : `${shown} of ${held}`;
}
