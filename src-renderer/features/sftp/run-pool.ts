/**
 * Runs `work` over `items` in order, as many at once as `budget` allows: an item takes
 * `weight(item)` of it while it runs, and one item always may run however heavy. At most
 * `maxAtOnce` run. Resolves when all have run; `work` must not throw.
 */
export async function runPool<T>(
  items: readonly T[],
  work: (item: T) => Promise<void>,
  opts: { weight: (item: T) => number; budget: number; maxAtOnce: number },
): Promise<void> {
  let next = 0;
  let used = 0;
  let wake: (() => void) | null = null;
  const running = new Set<Promise<void>>();
  while (next < items.length || running.size) {
    const it = items[next];
    const w = it === undefined ? 0 : opts.weight(it);
    if (it !== undefined && running.size < opts.maxAtOnce && (running.size === 0 || used + w <= opts.budget)) {
      next++;
      used += w;
      const p: Promise<void> = work(it).finally(() => {
        running.delete(p);
        used -= w;
        wake?.();
      });
      running.add(p);
      continue;
    }
    await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
  }
}
