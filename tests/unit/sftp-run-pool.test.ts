import { describe, expect, test } from 'vitest';
import { runPool } from '../../src-renderer/features/sftp/run-pool.js';

/** Work that records when each item starts and how many run beside it, and ends when told. */
function harness() {
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const ends = new Map<number, () => void>();
  const work = (n: number) =>
    new Promise<void>((resolve) => {
      started.push(n);
      running++;
      most = Math.max(most, running);
      ends.set(n, () => {
        running--;
        resolve();
      });
    });
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { started, work, ends, tick, most: () => most };
}

describe('runPool: a batch of uploads under a byte budget', () => {
  test('runs light items side by side up to maxAtOnce, in order', async () => {
    const h = harness();
    const done = runPool([1, 2, 3, 4, 5], h.work, { weight: () => 1, budget: 100, maxAtOnce: 3 });
    await h.tick();
    expect(h.started).toEqual([1, 2, 3]);
    h.ends.get(2)?.();
    await h.tick();
    expect(h.started).toEqual([1, 2, 3, 4]);
    for (const n of [1, 3, 4]) h.ends.get(n)?.();
    await h.tick();
    h.ends.get(5)?.();
    await done;
    expect(h.most()).toBe(3);
  });

  test('a heavy item runs alone once it is next, and one always runs however heavy', async () => {
    const h = harness();
    const weights: Record<number, number> = { 1: 10, 2: 100, 3: 10 };
    const done = runPool([1, 2, 3], h.work, { weight: (n) => weights[n] ?? 0, budget: 50, maxAtOnce: 8 });
    await h.tick();
    expect(h.started).toEqual([1]); // 2 waits: 10 + 100 is over the budget
    h.ends.get(1)?.();
    await h.tick();
    expect(h.started).toEqual([1, 2]); // alone, though over the budget
    h.ends.get(2)?.();
    await h.tick();
    h.ends.get(3)?.();
    await done;
    expect(h.started).toEqual([1, 2, 3]);
    expect(h.most()).toBe(1);
  });

  test('an empty batch ends at once', async () => {
    await expect(runPool([], async () => undefined, { weight: () => 1, budget: 1, maxAtOnce: 1 })).resolves.toBeUndefined();
  });
});
