import type { Readable } from 'node:stream';

/**
 * What a server sent before (or instead of) its SSH identification: nothing, an SSH
 * identification ("SSH-2.0-…"), or something else, of which its first line is kept
 * ("HTTP/1.1 400 Bad Request"; empty when it was not text).
 */
export type ServerSaid = { kind: 'nothing' } | { kind: 'ssh' } | { kind: 'other'; firstLine: string };

/** ssh2 takes lines of up to 8 KiB before the identification; past that, what came is kept no longer. */
const MAX_KEPT_CHARS = 8192;
/** As much of a line as a message shows. */
const MAX_SHOWN_CHARS = 120;

/**
 * Listens to what a server sends until it identifies itself as an SSH server, so a port that
 * answers as something else (a web server, a mail server) can be named by what it said: ssh2
 * keeps those lines to itself and reports only "Connection lost before handshake" or a timeout.
 * Listens only while logging in (`stop`): a session's data is none of its business.
 */
export class ServerWords {
  private kept = '';
  private sawSsh = false;
  private stream: Readable | null = null;

  private readonly onData = (chunk: Buffer): void => {
    this.kept += chunk.toString('latin1');
    if (/(?:^|\n)SSH-/.test(this.kept)) this.sawSsh = true;
    if (this.sawSsh || this.kept.length >= MAX_KEPT_CHARS) {
      this.kept = this.kept.slice(0, MAX_KEPT_CHARS);
      this.stop();
    }
  };

  /**
   * Starts listening. Call it after ssh2's `connect()`, which pauses the stream until its own
   * reader is there: listening before that would start the data flowing with nobody to parse it.
   */
  listen(stream: Readable): void {
    this.stream = stream;
    stream.on('data', this.onData);
  }

  stop(): void {
    this.stream?.removeListener('data', this.onData);
    this.stream = null;
  }

  get said(): ServerSaid {
    if (this.sawSsh) return { kind: 'ssh' };
    const first = this.kept.split('\n').find((l) => l.trim() !== '');
    if (first === undefined) return this.kept ? { kind: 'other', firstLine: '' } : { kind: 'nothing' };
    // A line of text, or nothing: the bytes of a binary protocol are nothing a person can read.
    const line = /^[\x20-\x7e\t\r]*$/.test(first) ? first.trim() : '';
    return { kind: 'other', firstLine: line.length > MAX_SHOWN_CHARS ? `${line.slice(0, MAX_SHOWN_CHARS)}…` : line };
  }
}
