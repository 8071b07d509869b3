/** Paths typed into a shell for the user (a dropped row, "Open a terminal here"). */
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src-renderer/composables/shell-quote.js';

describe('shellQuote', () => {
  it('leaves a word of plain characters as it is', () => {
    expect(shellQuote('/var/log/syslog.1')).toBe('/var/log/syslog.1');
    expect(shellQuote('backup@2026-11-26_a+b=c,d%e:f')).toBe('backup@2026-11-26_a+b=c,d%e:f');
  });

  it('single-quotes anything a shell would split or expand', () => {
    expect(shellQuote('/srv/My Files/a.txt')).toBe("'/srv/My Files/a.txt'");
    expect(shellQuote('$HOME')).toBe("'$HOME'");
    expect(shellQuote('~/x')).toBe("'~/x'");
    expect(shellQuote('a*b')).toBe("'a*b'");
    expect(shellQuote('a;rm -rf b')).toBe("'a;rm -rf b'");
    expect(shellQuote('')).toBe("''");
  });

  it('a quote inside ends the quoting, is escaped, and starts it again', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});
