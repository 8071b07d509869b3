/**
 * The shared mailbox between the WebSocket worker and the page (src-renderer/transport/
 * shared-mailbox.ts): frames come out whole and in order across wrap-arounds, a full mailbox
 * refuses instead of overwriting, and a writer on another thread wakes a listening reader.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { MAILBOX_MAX_FRAME, MailboxReader, MailboxWriter, createMailbox } from '../../src-renderer/transport/shared-mailbox.js';
import { testFrame } from '../fixtures/mailbox-frames.js';

const bytes = (b: ArrayBuffer) => new Uint8Array(b);
/** Byte equality without a deep compare of every element (frames are up to 32 KiB). */
const same = (got: ArrayBuffer, want: Uint8Array) => Buffer.from(got).equals(want);

describe('shared mailbox', () => {
  it('gives back every frame whole and in order, across many wrap-arounds of a small ring', () => {
    // Frames up to MAILBOX_MAX_FRAME in a ring of twice that: most puts meet a full ring, and
    // frames run over the end of the ring at every offset the lengths produce.
    const buffer = createMailbox(64 * 1024);
    const writer = new MailboxWriter(buffer);
    const reader = new MailboxReader(buffer);
    let next = 0;
    let read = 0;
    let refused = 0;
    while (read < 2000) {
      // Put until full, then read everything: the ring wraps at a different place each round.
      while (next < 2000 && writer.put(testFrame(next))) next++;
      if (next < 2000) refused++;
      const frames = reader.drain();
      for (const f of frames) if (!same(f, testFrame(read++))) throw new Error(`frame ${read - 1} differs`);
    }
    expect(read).toBe(2000);
    expect(refused).toBeGreaterThan(100); // the ring was full many times: space did come back
    expect(reader.drain()).toEqual([]);
  });

  it('refuses a frame that is over the limit or does not fit, and leaves what is there intact', () => {
    const buffer = createMailbox(64 * 1024);
    const writer = new MailboxWriter(buffer);
    const reader = new MailboxReader(buffer);
    expect(writer.put(new Uint8Array(MAILBOX_MAX_FRAME + 1))).toBe(false);
    const a = new Uint8Array(MAILBOX_MAX_FRAME).fill(1);
    const b = new Uint8Array(MAILBOX_MAX_FRAME - 100).fill(2);
    expect(writer.put(a)).toBe(true);
    expect(writer.put(b)).toBe(true);
    expect(writer.put(new Uint8Array(200).fill(3))).toBe(false); // 64 KiB minus headers: no room
    const out = reader.drain().map(bytes);
    expect(out).toEqual([a, b]);
    // Zero-length frames are frames too.
    expect(writer.put(new Uint8Array(0))).toBe(true);
    expect(reader.drain().map((f) => f.byteLength)).toEqual([0]);
  });

  it('a writer on another thread wakes a listening reader; 5000 frames arrive in order', async () => {
    const buffer = createMailbox(); // the product's size
    const reader = new MailboxReader(buffer);
    const got: ArrayBuffer[] = [];
    let wakes = 0;
    const all = new Promise<void>((resolve) => {
      reader.listen((frames) => {
        wakes++;
        got.push(...frames);
        if (got.length === 5000) resolve();
      });
    });
    // A real second thread, running the TypeScript module bundled the way Vite bundles it for the page.
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('../fixtures/mailbox-writer.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'cjs',
      platform: 'node',
    });
    const worker = new Worker(bundle.outputFiles[0]!.text, { eval: true, workerData: { buffer, count: 5000 } });
    const done = new Promise<{ put: number; full: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect((await done).put).toBe(5000);
    await all;
    reader.stop();
    await worker.terminate();
    expect(got.length).toBe(5000);
    expect(got.filter((f, i) => !same(f, testFrame(i))).length).toBe(0);
    expect(wakes).toBeGreaterThan(0);
    expect(reader.drain()).toEqual([]);
  });

  it('stop() ends listening: frames put afterwards wait in the mailbox', async () => {
    const buffer = createMailbox();
    const writer = new MailboxWriter(buffer);
    const reader = new MailboxReader(buffer);
    const got: number[] = [];
    reader.listen((frames) => got.push(...frames.map((f) => f.byteLength)));
    writer.put(new Uint8Array(5));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([5]);
    reader.stop();
    writer.put(new Uint8Array(7));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([5]);
    expect(reader.drain().map((f) => f.byteLength)).toEqual([7]);
  });
});
