import { randomBytes, randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { FRAME_HEADROOM, allocFramed, headroomOf } from '../../src-main/node/frame-headroom.js';
import { decodeFrame, encodeBytesEvent, encodeFrame } from '../../src-main/server/codec.js';

function framed(bytes: Uint8Array): Buffer {
  const b = allocFramed(bytes.byteLength);
  b.set(bytes);
  return b;
}

test('a terminal.data frame built in the headroom is the same bytes as the plain encoding (≥ 64 KiB: both bin 32), and is a view of the batch', () => {
  for (const seq of [0, 127, 65_536, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]) {
    const data = framed(randomBytes(70_000));
    const payload = { sessionId: randomUUID(), seq, data };
    const plain = encodeFrame({ t: 'event', name: 'terminal.data', payload });
    const frame = encodeBytesEvent('terminal.data', payload);
    expect(Buffer.from(frame).equals(Buffer.from(plain))).toBe(true);
    // No copy: the frame ends exactly where the batch ends, in the batch's own memory.
    expect(frame.buffer).toBe(data.buffer);
    expect(frame.byteOffset + frame.byteLength).toBe(data.byteOffset + data.byteLength);
    expect(decodeFrame(frame)).toEqual({ t: 'event', name: 'terminal.data', payload: { sessionId: payload.sessionId, seq, data: new Uint8Array(data) } });
  }
});

test('bytes without headroom get a frame of their own, and the memory in front of them is left alone', () => {
  // A view into the middle of a bigger buffer (as pooled slices are): its neighbours must not change.
  const pool = Buffer.alloc(4096, 0x5a);
  const data = pool.subarray(FRAME_HEADROOM * 2, FRAME_HEADROOM * 2 + 1000);
  data.fill(7);
  expect(headroomOf(data)).toBe(0);
  const payload = { sessionId: 's1', seq: 42, data };
  const frame = encodeBytesEvent('terminal.data', payload);
  expect(frame.buffer).not.toBe(pool.buffer);
  // bin 32 where encodeFrame picks bin 16 for 1000 bytes: the same value once decoded.
  expect(decodeFrame(frame)).toEqual(decodeFrame(encodeFrame({ t: 'event', name: 'terminal.data', payload })));
  expect(pool.subarray(0, FRAME_HEADROOM * 2).every((b) => b === 0x5a)).toBe(true);
  // A sub-view of a framed batch does not qualify either.
  expect(headroomOf(framed(randomBytes(10)).subarray(1))).toBe(0);
});

test('two clients framing the same batch write identical headers', () => {
  const data = framed(randomBytes(1000));
  const payload = { sessionId: randomUUID(), seq: 9, data };
  const a = Buffer.from(encodeBytesEvent('terminal.data', payload));
  const b = encodeBytesEvent('terminal.data', payload);
  expect(Buffer.from(b).equals(a)).toBe(true);
});
