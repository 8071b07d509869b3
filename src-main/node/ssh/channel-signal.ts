import type { ClientChannel } from 'ssh2';

/** What of ssh2 1.x's Channel this uses; see lib/Channel.js (signal) and lib/protocol/Protocol.js (signal). */
interface Ssh2ChannelInternals {
  outgoing: { state: string; id: number };
  _client: { _protocol: { signal(channelId: number, signalName: string): void } };
}

function internalsOf(ch: ClientChannel): Ssh2ChannelInternals | null {
  const c = ch as unknown as Partial<Ssh2ChannelInternals>;
  const out = c.outgoing;
  if (typeof out !== 'object' || out === null || typeof out.state !== 'string' || typeof out.id !== 'number') return null;
  if (typeof c._client?._protocol?.signal !== 'function') return null;
  return c as Ssh2ChannelInternals;
}

/**
 * Sends a signal to the command on an exec channel whose stdin we ended. SSH allows a signal
 * request until the channel closes (RFC 4254 §6.9), and sshd delivers it to the command's process
 * group; but ssh2's `signal()` sends nothing once the channel is not writable, which it no longer
 * is after our EOF. So then the request goes out through ssh2's protocol object, its shape checked
 * first as sftp/write-packet.ts does; otherwise (another ssh2, stdin still open) through `signal()`.
 */
export function signalCommand(ch: ClientChannel, signalName: string): void {
  const c = internalsOf(ch);
  if (c?.outgoing.state === 'eof') {
    c._client._protocol.signal(c.outgoing.id, signalName);
    return;
  }
  ch.signal(signalName);
}
