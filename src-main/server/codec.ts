import { Decoder, Encoder } from '@msgpack/msgpack';

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
