/**
 * The per-channel budget of SFTP requests in flight (file-copy.ts): a fixed number of slots,
 * handed out in arrival order, and a cancelled waiter leaves the queue without taking one.
 */
import { describe, expect, test } from 'vitest';
import { RequestSlots } from '../../src-main/node/sftp/file-copy.js';

const settled = () => new Promise((r) => setTimeout(r, 0));

describe('RequestSlots', () => {
  test('gives out `size` slots at once, then serves waiters in order as slots come back', async () => {
    const slots = new RequestSlots(2);
    expect(await slots.acquire()).toBe(true);
    expect(await slots.acquire()).toBe(true);
    const order: string[] = [];
    const a = slots.acquire().then((got) => order.push(`a:${got}`));
    const b = slots.acquire().then((got) => order.push(`b:${got}`));
    await settled();
    expect(order).toEqual([]);
    slots.release();
    await a;
    expect(order).toEqual(['a:true']);
    slots.release();
    await b;
    expect(order).toEqual(['a:true', 'b:true']);
  });

  test('a waiter whose transfer is cancelled gets no slot and leaves the queue', async () => {
    const slots = new RequestSlots(1);
    expect(await slots.acquire()).toBe(true);
    const cancel = new AbortController();
    const cancelled = slots.acquire(cancel.signal);
    const next = slots.acquire();
    cancel.abort();
    expect(await cancelled).toBe(false);
    // The slot that comes back goes to the next waiter, not to the cancelled one.
    slots.release();
    expect(await next).toBe(true);
    // And an already-cancelled transfer does not take one either.
    slots.release();
    expect(await slots.acquire(AbortSignal.abort())).toBe(false);
    expect(await slots.acquire()).toBe(true);
  });
});
