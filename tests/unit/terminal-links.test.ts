import { describe, expect, it } from 'vitest';
import { WEB_LINK_PATTERN, clickOpensLink, openLinkGesture } from '../../src-renderer/features/terminal/external-links.js';

const linkIn = (text: string) => text.match(WEB_LINK_PATTERN)?.[0];

describe('web links in terminal output', () => {
  it('keeps a pair of parentheses that is part of the address', () => {
    expect(linkIn('see https://en.wikipedia.org/wiki/Bash_(Unix_shell) for more')).toBe('https://en.wikipedia.org/wiki/Bash_(Unix_shell)');
    expect(linkIn('https://example.com/f(x)/g?q=(1)')).toBe('https://example.com/f(x)/g?q=(1)');
  });

  it('leaves out a closing parenthesis without its opening one, and the punctuation after an address', () => {
    expect(linkIn('(docs: https://example.com/a/b)')).toBe('https://example.com/a/b');
    expect(linkIn('read https://example.com/a.')).toBe('https://example.com/a');
    expect(linkIn('at https://example.com/?q=1, then')).toBe('https://example.com/?q=1');
    expect(linkIn('"https://example.com/x"')).toBe('https://example.com/x');
    expect(linkIn('https://example.com/(open')).toBe('https://example.com/');
  });

  it('finds nothing where there is no web address', () => {
    expect(linkIn('ftp://example.com/file and /usr/share/doc')).toBeUndefined();
  });

  it('opens on Ctrl+click or Cmd+click only, and says which', () => {
    expect(clickOpensLink({ ctrlKey: false, metaKey: false })).toBe(false);
    expect(clickOpensLink({ ctrlKey: true, metaKey: false })).toBe(true);
    expect(clickOpensLink({ ctrlKey: false, metaKey: true })).toBe(true);
    expect(openLinkGesture('Linux x86_64')).toBe('Ctrl+click');
    expect(openLinkGesture('MacIntel')).toBe('⌘+click');
  });
});
