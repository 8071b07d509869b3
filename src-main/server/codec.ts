import { Decoder, Encoder } from '@msgpack/msgpack';
import { headroomOf } from '../node/frame-headroom.js';

// MessagePack keeps Uint8Array as its bin type, so bytes cross the WebSocket as bytes.
// Undefined object fields are dropped (as JSON does), so optional fields stay optional.
const encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();

export function encodeFrame(value: unknown): Uint8Array {
  return encoder.encode(value);
}

export function decodeFrame(bytes: Uint8Array): unknown {
  return decoder.decode(bytes);
}

const EMPTY = new Uint8Array(0);
/** MessagePack bin 32: type byte and a big-endian uint32 length. */
const BIN32_HEADER = 5;

/**
 * An event frame whose payload ends in `data` bytes (terminal.data): the value of
 * encodeFrame({ t: 'event', name, payload }) (always with a bin 32, so byte for byte the same from
 * 64 KiB up), but built around `data` itself: the header goes into
 * the headroom in front of a batch made by allocFramed, and the frame is a view of that buffer.
 * Without headroom it costs one buffer and one copy (encodeFrame's costs two copies).
 *
 * Every client that receives the batch writes the same header bytes there, so several windows
 * sending the same batch at once never see each other's writes.
 */
export function encodeBytesEvent(name: string, payload: { data: Uint8Array } & Record<string, unknown>): Uint8Array {
  const { data, ...rest } = payload;
  // `data` last, as an empty bin 8 (0xc4 0x00), which becomes a bin 32 of the real length.
  const head = encoder.encode({ t: 'event', name, payload: { ...rest, data: EMPTY } });
  const keep = head.length - 2;
  if (head[keep] !== 0xc4 || head[keep + 1] !== 0) return encodeFrame({ t: 'event', name, payload });
  const headerLen = keep + BIN32_HEADER;
  const frame =
    headroomOf(data) >= headerLen ? new Uint8Array(data.buffer, data.byteOffset - headerLen, headerLen + data.byteLength) : new Uint8Array(headerLen + data.byteLength);
  frame.set(head.subarray(0, keep), 0);
  frame[keep] = 0xc6;
  new DataView(frame.buffer, frame.byteOffset + keep + 1, 4).setUint32(0, data.byteLength);
  if (frame.buffer !== data.buffer) frame.set(data, headerLen);
  return frame;
}
