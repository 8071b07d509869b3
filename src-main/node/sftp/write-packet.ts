import type { SFTPWrapper } from 'ssh2';

/**
 * SFTP WRITE requests built around data that was read straight into them.
 *
 * ssh2's `sftp.write()` allocates a new packet per request (256 KiB for OpenSSH, so a fresh
 * allocation the GC must find again) and copies the data into it, and each of the request's eight
 * SSH packets then goes to the socket in its own write. For an upload that is bound by the CPU of
 * both ends (it is, on two cores), that cost is the difference to OpenSSH's sftp. Here the caller
 * reads file data into a buffer it keeps, behind room for the WRITE header
 * (`writeHeaderLength`), and the request is sent as it stands, its SSH packets corked into one
 * write. Measured by bench/sftp-throughput.ts on the project VM: client CPU 2.7-2.8 → 2.2-2.5 s/GB.
 *
 * This reaches into ssh2's SFTP object (its request table, request id and send window). ssh2 is
 * pinned in package.json; the shape is checked on every call (`internalsOf`), and anything else
 * (another ssh2, a closed channel, a window too small for the whole request, requests already
 * queued) goes through `sftp.write()` unchanged, so the worst a change in ssh2 can cost is what
 * this saves. tests/integration/sftp-write-packet.test.ts checks both paths against sshd.
 */

/** What of ssh2 1.x's SFTP object this uses; see lib/protocol/SFTP.js (write, tryWritePayload). */
interface Ssh2SftpInternals {
  server: boolean;
  _writeReqid: number;
  _maxWriteLen: number;
  _requests: Record<number, { cb: (err?: Error) => void }>;
  _buffer: unknown[];
  _waitWindow: boolean;
  _protocol: { channelData(channelId: number, data: Buffer): void };
  outgoing: { state: string; window: number; packetSize: number; id: number };
  _client?: { _sock?: { cork?: unknown; uncork?: unknown } };
}

const MAX_REQID = 2 ** 32 - 1;
const SFTP_WRITE = 6;

function internalsOf(sftp: SFTPWrapper): Ssh2SftpInternals | null {
  const s = sftp as unknown as Partial<Ssh2SftpInternals>;
  const out = s.outgoing;
  if (
    s.server !== false ||
    typeof s._writeReqid !== 'number' ||
    typeof s._maxWriteLen !== 'number' ||
    typeof s._requests !== 'object' ||
    s._requests === null ||
    !Array.isArray(s._buffer) ||
    typeof s._waitWindow !== 'boolean' ||
    typeof s._protocol?.channelData !== 'function' ||
    typeof out !== 'object' ||
    out === null ||
    typeof out.window !== 'number' ||
    typeof out.packetSize !== 'number' ||
    typeof out.id !== 'number'
  ) {
    return null;
  }
  return s as Ssh2SftpInternals;
}

/** Bytes a WRITE request for `handle` needs in front of its data: length, type, id, handle, offset, data length. */
export function writeHeaderLength(handle: Buffer): number {
  return 4 + 1 + 4 + 4 + handle.length + 8 + 4;
}

/** How the last call went: 'direct' sent the caller's buffer, 'copied' went through sftp.write(). */
export type WritePath = 'direct' | 'copied';

/**
 * Writes `packet[header, header + dataLength)` at `position` of `handle`, where header is
 * `writeHeaderLength(handle)`; the bytes before it are overwritten with the request header.
 * `cb` is called once, as sftp.write() calls it. Keep the buffer as it is until then: sent as it
 * stands, it is free once this returns, but sftp.write() sends what is over the server's limit
 * only after the first part is answered.
 */
export function writeWithHeadroom(
  sftp: SFTPWrapper,
  handle: Buffer,
  packet: Buffer,
  dataLength: number,
  position: number,
  cb: (err?: Error | null) => void,
): WritePath {
  const header = writeHeaderLength(handle);
  const total = header + dataLength;
  const s = internalsOf(sftp);
  if (
    !s ||
    dataLength <= 0 ||
    dataLength > s._maxWriteLen ||
    total > packet.length ||
    s.outgoing.state !== 'open' ||
    s._buffer.length > 0 ||
    s._waitWindow ||
    s.outgoing.window < total
  ) {
    sftp.write(handle, packet, header, dataLength, position, (err) => cb(err));
    return 'copied';
  }

  const reqid = (s._writeReqid = (s._writeReqid + 1) & MAX_REQID);
  packet.writeUInt32BE(total - 4, 0);
  packet[4] = SFTP_WRITE;
  packet.writeUInt32BE(reqid >>> 0, 5);
  packet.writeUInt32BE(handle.length, 9);
  handle.copy(packet, 13);
  packet.writeBigUInt64BE(BigInt(position), 13 + handle.length);
  packet.writeUInt32BE(dataLength, 21 + handle.length);
  // Keyed as the STATUS reply reads it back (unsigned).
  s._requests[reqid >>> 0] = { cb: (err?: Error) => cb(err) };

  // As ssh2's tryWritePayload: CHANNEL_DATA messages of at most the peer's packet size, each
  // taken from the window (which holds `total`, checked above). channelData copies synchronously.
  const out = s.outgoing;
  // One write for the whole request (ssh2 writes each SSH packet on its own): the socket's, or a
  // jump host's channel, which is a stream too.
  const sock = s._client?._sock;
  const cork = typeof sock?.cork === 'function' && typeof sock.uncork === 'function' ? (sock as { cork(): void; uncork(): void }) : null;
  cork?.cork();
  try {
    for (let p = 0; p < total; ) {
      const n = Math.min(total - p, out.packetSize);
      out.window -= n;
      s._protocol.channelData(out.id, packet.subarray(p, p + n));
      p += n;
    }
  } finally {
    cork?.uncork();
  }
  return 'direct';
}
