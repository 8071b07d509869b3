import { describe, expect, it } from 'vitest';
import { characterCount, readOsc52 } from '../../src-renderer/features/terminal/osc52.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('readOsc52', () => {
  it('reads the text a program copies, to whichever selection it names', () => {
    expect(readOsc52(`c;${b64('hi')}`)).toEqual({ kind: 'copy', text: 'hi' });
    expect(readOsc52(`;${b64('default selection')}`)).toEqual({ kind: 'copy', text: 'default selection' });
    expect(readOsc52(`s0;${b64('neovim *')}`)).toEqual({ kind: 'copy', text: 'neovim *' });
    expect(readOsc52(`c;${b64('été\nline two\t👍')}`)).toEqual({ kind: 'copy', text: 'été\nline two\t👍' });
    // Base64 folded over lines, as some programs send it.
    expect(readOsc52(`c;${b64('folded text').replace(/(.{4})/g, '$1\n')}`)).toEqual({ kind: 'copy', text: 'folded text' });
  });

  it('never answers a query for the clipboard, and ignores what is no copy', () => {
    expect(readOsc52('c;?')).toEqual({ kind: 'none' });
    expect(readOsc52('c;')).toEqual({ kind: 'none' }); // "clear": the clipboard is left as it is
    expect(readOsc52(b64('no selection part'))).toEqual({ kind: 'none' });
    expect(readOsc52(`x;${b64('bad selection')}`)).toEqual({ kind: 'none' });
    expect(readOsc52('c;not*base64!')).toEqual({ kind: 'none' });
    expect(readOsc52('c;aGk=a')).toEqual({ kind: 'none' }); // padding inside
    expect(readOsc52('c;a')).toEqual({ kind: 'none' }); // no whole byte
  });

  it('refuses more than the cap, saying how much was sent, without decoding it', () => {
    expect(readOsc52(`c;${b64('x'.repeat(100))}`, 100)).toEqual({ kind: 'copy', text: 'x'.repeat(100) });
    expect(readOsc52(`c;${b64('x'.repeat(101))}`, 100)).toEqual({ kind: 'too-large', bytes: 101 });
    expect(readOsc52(`c;${'A'.repeat(2 * 1024 * 1024)}`)).toEqual({ kind: 'too-large', bytes: 1536 * 1024 });
  });
});

describe('characterCount', () => {
  it('counts characters as a person does', () => {
    expect(characterCount('hi')).toBe('2 characters');
    expect(characterCount('👍')).toBe('1 character');
    expect(characterCount('x'.repeat(12345))).toBe('12,345 characters');
  });
});
