import { describe, expect, it } from 'vitest';
import { BACKGROUND_WRITE_BYTES, type FeederTarget, OutputFeeder, inNewTask } from '../../src-renderer/features/terminal/output-feeder.js';

/**
 * An xterm stand-in whose writes finish only when the test says the parser got to them. Like
 * xterm it has consumed the bytes by then: `parsed` snapshots them, and the feeder may reuse the
 * buffer afterwards.
 */
class SlowTarget implements FeederTarget {
  writes: { data: Uint8Array; parsed: () => void }[] = [];
  write(data: Uint8Array, parsed: () => void): void {
    const w = { data, parsed: () => {} };
    w.parsed = () => {
      w.data = Uint8Array.from(data); // what the parser saw; the feeder may reuse `data` after this
      parsed();
    };
    this.writes.push(w);
  }
  finish(i: number): void {
    this.writes[i]?.parsed();
  }
  text(): string {
    return this.writes.map((w) => Buffer.from(w.data).toString('latin1')).join('');
  }
}

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

describe('OutputFeeder', () => {
  it('writes at once when idle, and merges what arrives while xterm is busy into one write', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n));
    f.push(bytes('one '), 4);
    expect(target.writes).toHaveLength(1);
    f.push(bytes('two '), 4);
    f.push(bytes('three '), 6);
    expect(target.writes).toHaveLength(1); // still parsing the first
    target.finish(0);
    expect(acks).toEqual([4]);
    expect(target.writes).toHaveLength(2);
    expect(Buffer.from(target.writes[1]!.data).toString('latin1')).toBe('two three ');
    target.finish(1);
    expect(acks).toEqual([4, 10]);
    expect(target.text()).toBe('one two three ');
  });

  it('never writes more than maxWrite at once (beyond a single larger chunk) and keeps the order', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n), 10);
    f.push(bytes('aaaa'), 4); // written at once
    for (const s of ['bbbb', 'cccc', 'dddd', 'eeeeeeeeeeeeee', 'ff']) f.push(bytes(s), s.length);
    for (let i = 0; i < 10 && i < target.writes.length; i++) target.finish(i);
    expect(target.writes.map((w) => Buffer.from(w.data).toString('latin1'))).toEqual(['aaaa', 'bbbbcccc', 'dddd', 'eeeeeeeeeeeeee', 'ff']);
    expect(acks.reduce((a, b) => a + b, 0)).toBe(4 + 4 + 4 + 4 + 14 + 2);
  });

  it('reuses its merge buffer only after xterm has consumed the previous merged write', () => {
    const target = new SlowTarget();
    const f = new OutputFeeder(target, () => {});
    f.push(bytes('a'), 1);
    f.push(bytes('bb'), 2);
    f.push(bytes('cc'), 2);
    target.finish(0); // writes "bbcc" from the merge buffer
    f.push(bytes('dd'), 2);
    f.push(bytes('ee'), 2); // queued while "bbcc" is being parsed: the buffer must not change yet
    expect(Buffer.from(target.writes[1]!.data).toString('latin1')).toBe('bbcc');
    target.finish(1); // now "ddee" may reuse it
    target.finish(2);
    expect(target.text()).toBe('abbccddee');
  });

  it('credits only what the host is owed, also for empty and already-credited chunks', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n));
    f.push(new Uint8Array(0), 7); // nothing to show (already shown from the backlog), credit still owed
    expect(acks).toEqual([7]);
    f.push(bytes('xyz'), 0); // credited by the hub on arrival
    f.push(bytes('uvw'), 3);
    f.push(new Uint8Array(0), 5);
    target.finish(0);
    target.finish(1);
    expect(acks.reduce((a, b) => a + b, 0)).toBe(7 + 3 + 5);
    expect(target.text()).toBe('xyzuvw');
  });

  it('in the background writes small pieces, each in a task of its own, and credits each piece as it is parsed', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const tasks: (() => void)[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n), 1024 * 1024, (fn) => tasks.push(fn));
    f.background = true;
    // One large chunk from the host, as a flood sends them, owed in full; then a small one.
    const big = new Uint8Array(2 * BACKGROUND_WRITE_BYTES + 100).fill(0x61);
    f.push(big, big.byteLength);
    f.push(bytes('tail'), 4);
    expect(target.writes).toHaveLength(1);
    expect(target.writes[0]!.data.byteLength).toBe(BACKGROUND_WRITE_BYTES);
    target.finish(0);
    expect(acks).toEqual([BACKGROUND_WRITE_BYTES]);
    // The next piece waits for a task of its own: whatever the page queued meanwhile goes first.
    expect(target.writes).toHaveLength(1);
    expect(tasks).toHaveLength(1);
    tasks.shift()!();
    expect(target.writes[1]!.data.byteLength).toBe(BACKGROUND_WRITE_BYTES);
    target.finish(1);
    tasks.shift()!();
    // What is left of the big chunk (100 bytes) and the small one merge, as in front.
    expect(Buffer.from(target.writes[2]!.data).toString('latin1')).toBe('a'.repeat(100) + 'tail');
    target.finish(2);
    tasks.shift()!();
    expect(target.writes).toHaveLength(3);
    expect(acks).toEqual([BACKGROUND_WRITE_BYTES, BACKGROUND_WRITE_BYTES, 104]);
    expect(target.text()).toBe('a'.repeat(big.byteLength) + 'tail');
  });

  it('a piece of a chunk credited less than its bytes (trimmed after a read back) never credits more than owed', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n), 1024 * 1024, (fn) => fn());
    f.background = true;
    f.push(new Uint8Array(3 * BACKGROUND_WRITE_BYTES).fill(0x62), 10);
    for (let i = 0; i < 3; i++) target.finish(i);
    expect(target.writes).toHaveLength(3);
    expect(acks.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('back in front, a large chunk is written whole again', () => {
    const target = new SlowTarget();
    const f = new OutputFeeder(target, () => {}, 1024 * 1024, (fn) => fn());
    f.background = true;
    const big = new Uint8Array(4 * BACKGROUND_WRITE_BYTES).fill(0x63);
    f.push(big, big.byteLength);
    f.background = false;
    target.finish(0);
    expect(target.writes[1]!.data.byteLength).toBe(3 * BACKGROUND_WRITE_BYTES);
  });

  it('inNewTask runs its functions in order, each later than the code that queued it', async () => {
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      inNewTask(() => order.push('first'));
      inNewTask(() => {
        order.push('second');
        resolve();
      });
      order.push('sync');
    });
    expect(order).toEqual(['sync', 'first', 'second']);
  });

  it('after dispose nothing is written or credited', () => {
    const target = new SlowTarget();
    const acks: number[] = [];
    const f = new OutputFeeder(target, (n) => acks.push(n));
    f.push(bytes('first'), 5);
    f.push(bytes('queued'), 6);
    f.dispose();
    target.finish(0);
    f.push(bytes('late'), 4);
    expect(target.writes).toHaveLength(1);
    expect(acks).toEqual([]);
  });
});
