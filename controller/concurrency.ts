// Bounded concurrency for the controller's fan-outs (an Instance's tasks, a rollout's trigger
// writes, the informer queries): at most `limit` calls of `fn` in flight, results in input order.

/** `fn` over `items`, at most `limit` at once; each worker takes the next item when its call ends. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
