import { describe, expect, it } from 'vitest';
import { cwdFromOsc7 } from '../../src-renderer/features/terminal/osc7-cwd.js';

describe('cwdFromOsc7', () => {
  it('reads the folder of a file:// report, with or without a host, percent-decoded', () => {
    expect(cwdFromOsc7('file://web01/home/ana/src')).toBe('/home/ana/src');
    expect(cwdFromOsc7('file:///tmp')).toBe('/tmp');
    expect(cwdFromOsc7('file://h/srv/my%20docs/%C3%A9t%C3%A9')).toBe('/srv/my docs/été');
  });

  it('takes a path that is not valid percent-encoding as written', () => {
    expect(cwdFromOsc7('file://h/100%/x')).toBe('/100%/x');
  });

  it('makes control characters spaces: the program in the terminal chose them', () => {
    expect(cwdFromOsc7('file://h/a%0Ab\u0007c')).toBe('/a b c');
  });

  it('refuses what is no folder report', () => {
    expect(cwdFromOsc7('')).toBeNull();
    expect(cwdFromOsc7('http://example.com/x')).toBeNull();
    expect(cwdFromOsc7('file://host-without-path')).toBeNull();
    expect(cwdFromOsc7(`file://h/${'a'.repeat(5000)}`)).toBeNull();
  });
});
