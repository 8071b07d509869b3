/** The font family xterm draws with always ends in a monospace fallback (font-family.ts). */
import { describe, expect, it } from 'vitest';
import { terminalFontFamily } from '../../src-renderer/features/terminal/font-family.js';

describe('terminalFontFamily', () => {
  it('appends the generic monospace family to a list that names none', () => {
    expect(terminalFontFamily('Fira Code')).toBe('Fira Code, monospace');
    expect(terminalFontFamily("'Iosevka Term', Consolas")).toBe("'Iosevka Term', Consolas, monospace");
    expect(terminalFontFamily('"No Such Font"')).toBe('"No Such Font", monospace');
  });

  it('leaves a list that already names it as it is, wherever and however it is written', () => {
    expect(terminalFontFamily("'JetBrains Mono', 'DejaVu Sans Mono', Menlo, Consolas, monospace")).toBe("'JetBrains Mono', 'DejaVu Sans Mono', Menlo, Consolas, monospace");
    expect(terminalFontFamily('monospace')).toBe('monospace');
    expect(terminalFontFamily('Menlo, MONOSPACE')).toBe('Menlo, MONOSPACE');
    expect(terminalFontFamily('monospace, Fira Code')).toBe('monospace, Fira Code');
  });

  it("counts a quoted 'monospace' as a font of that name, not the generic family", () => {
    expect(terminalFontFamily("'monospace'")).toBe("'monospace', monospace");
  });

  it('drops stray commas and spaces, and keeps commas inside quoted names', () => {
    expect(terminalFontFamily('  Fira Code ,  ')).toBe('Fira Code, monospace');
    expect(terminalFontFamily("'Odd, Font', Hack")).toBe("'Odd, Font', Hack, monospace");
    expect(terminalFontFamily('')).toBe('monospace');
  });
});
