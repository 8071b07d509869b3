import { describe, expect, test } from 'vitest';
import { Osc7Tracker } from '../../src-main/node/terminal/osc7.js';
import { TerminalRingBuffer, stripAnsi } from '../../src-main/node/terminal/ring-buffer.js';

const enc = (s: string) => Buffer.from(s, 'utf8');

describe('TerminalRingBuffer', () => {
  test('seq is the byte offset; sinceSeq reads only what is new', () => {
    const ring = new TerminalRingBuffer(1024);
    expect(ring.write(enc('hello '))).toBe(0);
    expect(ring.write(enc('world'))).toBe(6);
    const all = ring.read(0, 100);
    expect(all).toEqual({ text: 'hello world', seq: 0, nextSeq: 11, dropped: 0, truncated: false });
    ring.write(enc('!\n'));
    const next = ring.read(all.nextSeq, 100);
    expect(next.text).toBe('!\n');
    expect(next.seq).toBe(11);
    expect(next.nextSeq).toBe(13);
    // Nothing new: empty text, same seq.
    expect(ring.read(13, 100)).toMatchObject({ text: '', seq: 13, nextSeq: 13, truncated: false });
  });

  test('without sinceSeq returns the last maxBytes', () => {
    const ring = new TerminalRingBuffer(1024);
    ring.write(enc('0123456789'));
    expect(ring.read(undefined, 4)).toMatchObject({ text: '6789', seq: 6, nextSeq: 10, dropped: 0, truncated: false });
  });

  test('maxBytes limits a read and says more is there', () => {
    const ring = new TerminalRingBuffer(1024);
    ring.write(enc('abcdefghij'));
    const r = ring.read(2, 3);
    expect(r).toMatchObject({ text: 'cde', seq: 2, nextSeq: 5, truncated: true });
  });

  test('wraps around, keeps the newest bytes and reports what was dropped', () => {
    const ring = new TerminalRingBuffer(16);
    ring.write(enc('AAAAAAAAAA')); // 10
    ring.write(enc('BBBBBBBBBB')); // 20 total, keeps the last 16
    expect(ring.startSeq).toBe(4);
    expect(ring.endSeq).toBe(20);
    const r = ring.read(0, 100);
    expect(r).toMatchObject({ text: 'AAAAAABBBBBBBBBB', seq: 4, nextSeq: 20, dropped: 4 });
    // A single write larger than the capacity keeps its tail.
    ring.write(enc('x'.repeat(40) + 'END'));
    expect(ring.endSeq).toBe(63);
    expect(ring.read(undefined, 100).text).toBe('x'.repeat(13) + 'END');
  });

  test('never splits a UTF-8 character: the end waits for the next read, a broken start is skipped', () => {
    const ring = new TerminalRingBuffer(1024);
    const euro = enc('€'); // 3 bytes
    ring.write(Buffer.concat([enc('ab'), euro, enc('c')])); // a b E1 E2 E3 c
    const first = ring.read(0, 3); // would end after the first byte of €
    expect(first.text).toBe('ab');
    expect(first.nextSeq).toBe(2);
    const second = ring.read(first.nextSeq, 10);
    expect(second.text).toBe('€c');
    // Starting inside the character skips to the next one.
    expect(ring.read(3, 10)).toMatchObject({ text: 'c', seq: 5 });
    // maxBytes smaller than a character still makes progress.
    expect(ring.read(2, 1)).toMatchObject({ text: '€', nextSeq: 5 });
  });

  test('a character written in two chunks is read whole', () => {
    const ring = new TerminalRingBuffer(1024);
    const smile = enc('😀'); // 4 bytes
    ring.write(Buffer.concat([enc('>'), smile.subarray(0, 2)]));
    const r1 = ring.read(0, 100);
    expect(r1.text).toBe('>');
    ring.write(smile.subarray(2));
    expect(ring.read(r1.nextSeq, 100).text).toBe('😀');
  });

  test('a wrapped-off lead byte does not produce a replacement character', () => {
    const ring = new TerminalRingBuffer(16);
    ring.write(enc('xx'));
    ring.write(enc('€€€€€€')); // 20 bytes in all: the oldest kept byte (seq 4) is inside the first €
    expect(ring.startSeq).toBe(4);
    const r = ring.read(0, 100);
    expect(r.text).toBe('€€€€€');
    expect(r.seq).toBe(5);
  });

  test('stripAnsi gives the text a person saw', () => {
    const ring = new TerminalRingBuffer(1024);
    ring.write(enc('\x1b[1;32muser@host\x1b[0m:\x1b]7;file://host/tmp\x07~$ ls\r\nfile\r\n10%\r50%\r100%\r\n'));
    expect(ring.read(0, 1000, { stripAnsi: true }).text).toBe('user@host:~$ ls\nfile\n100%\n');
    expect(stripAnsi('abcdef\rXY')).toBe('XYcdef');
  });

  test('rejects a capacity too small to be useful', () => {
    expect(() => new TerminalRingBuffer(0)).toThrow(RangeError);
  });
});

describe('Osc7Tracker', () => {
  test('follows OSC 7 with BEL or ST, split across chunks, percent-encoded', () => {
    const t = new Osc7Tracker();
    expect(t.cwd).toBeNull();
    t.feed(enc('prompt \x1b]7;file://web01/home/ops\x07$ '));
    expect(t.cwd).toBe('/home/ops');
    expect(t.host).toBe('web01');
    const seq = enc('\x1b]7;file://web01/srv/my%20app/d%C3%A9j%C3%A0\x1b\\');
    t.feed(seq.subarray(0, 2));
    t.feed(seq.subarray(2, 9));
    expect(t.cwd).toBe('/home/ops');
    t.feed(seq.subarray(9));
    expect(t.cwd).toBe('/srv/my app/déjà');
    // Raw UTF-8 in the URL works too.
    t.feed(enc('\x1b]7;file:///données\x07'));
    expect(t.cwd).toBe('/données');
  });

  test('finds it amid coloured output, with its first bytes ending one chunk after colour codes', () => {
    const t = new Osc7Tracker();
    const colour = '\x1b[01;34mdir\x1b[0m  \x1b[01;32mrun.sh\x1b[0m\r\n'.repeat(50);
    t.feed(enc(colour));
    expect(t.cwd).toBeNull();
    // "ESC" alone, "ESC ]" and "ESC ] 7" at a chunk's end: each is kept for the next chunk.
    for (const cut of [1, 2, 3]) {
      const seq = `\x1b]7;file://h/var/log/${cut}\x07`;
      t.feed(enc(colour + seq.slice(0, cut)));
      t.feed(enc(seq.slice(cut) + colour));
      expect(t.cwd).toBe(`/var/log/${cut}`);
    }
    // A lone ESC at a chunk's end that turns out to be a colour code changes nothing.
    t.feed(enc(colour + '\x1b'));
    t.feed(enc('[0m' + colour));
    expect(t.cwd).toBe('/var/log/3');
  });

  test('ignores other OSC sequences and garbage', () => {
    const t = new Osc7Tracker();
    t.feed(enc('\x1b]0;title\x07\x1b]7;not-a-url\x07\x1b]8;;http://x\x07'));
    expect(t.cwd).toBeNull();
    // An unterminated sequence longer than any path is abandoned, not buffered for ever.
    t.feed(enc('\x1b]7;file://h/' + 'a'.repeat(20_000)));
    t.feed(enc('\x07'));
    expect(t.cwd).toBeNull();
  });
});
