/**
 * Terminal output batches with room for a wire header in front of them.
 *
 * Under an output flood the host allocated four buffers per 64 KiB of terminal output: the
 * socket read and the decrypted packet inside ssh2, the batch (TerminalSession.flush), and the
 * MessagePack frame that copied the batch once more. Backing stores count as external memory,
 * and V8 answered with a full mark-compact every ~150 ms with a heap of 20 MB. A batch made here
 * has FRAME_HEADROOM spare bytes before it, so the WebSocket server can write its frame header
 * there and send one view of the same memory (see src-main/server/codec.ts): no copy, no fourth
 * buffer.
 *
 * Only buffers made here are ever written in front of: their ArrayBuffers are remembered, so a
 * view into somebody else's memory (a slice of a pooled buffer, say) is never touched.
 */
/** Enough for the terminal.data header: ~110 bytes with a UUID session id and the largest seq (tested). */
export const FRAME_HEADROOM = 192;

const framed = new WeakSet<ArrayBuffer>();

/** A fresh Buffer of `size` bytes with FRAME_HEADROOM writable bytes before it (in the same ArrayBuffer). */
export function allocFramed(size: number): Buffer {
  const backing = new ArrayBuffer(FRAME_HEADROOM + size);
  framed.add(backing);
  return Buffer.from(backing, FRAME_HEADROOM, size);
}

/** The bytes in front of `data` that a frame header may use: FRAME_HEADROOM for allocFramed's buffers, else 0. */
export function headroomOf(data: Uint8Array): number {
  return data.buffer instanceof ArrayBuffer && framed.has(data.buffer) && data.byteOffset === FRAME_HEADROOM ? FRAME_HEADROOM : 0;
}
