// Runs one action on many VMs with bounded concurrency and reports every VM's own outcome: a bulk Start of 50
// VMs where 3 fail must say which 3 and why, not "some requests failed".

export interface BulkResult {
  key: string;
  ok: boolean;
  message: string;
}

export async function runBulk<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  run: (item: T) => Promise<unknown>,
  concurrency = 6,
): Promise<BulkResult[]> {
  const results: BulkResult[] = new Array<BulkResult>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i] as T;
      try {
        await run(item);
        results[i] = { key: keyOf(item), ok: true, message: 'ok' };
      } catch (err) {
        results[i] = { key: keyOf(item), ok: false, message: err instanceof Error ? err.message : String(err) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
