import { describe, expect, it } from 'vitest';
import {
  CODE_TO_SCANCODE,
  comboToStrokes,
  isExtended,
  KeyComboError,
  parseCombo,
  scancodeForCode,
  usLayoutStrokes,
} from '../../src-main/node/rdp/keymap.js';

describe('KeyboardEvent.code → scancode', () => {
  it('maps letters, digits and modifiers to set-1 scancodes', () => {
    expect(scancodeForCode('KeyA')).toBe(0x1e);
    expect(scancodeForCode('KeyZ')).toBe(0x2c);
    expect(scancodeForCode('Digit1')).toBe(0x02);
    expect(scancodeForCode('Digit0')).toBe(0x0b);
    expect(scancodeForCode('Enter')).toBe(0x1c);
    expect(scancodeForCode('ControlLeft')).toBe(0x1d);
    expect(scancodeForCode('ShiftLeft')).toBe(0x2a);
    expect(scancodeForCode('AltLeft')).toBe(0x38);
    expect(scancodeForCode('F1')).toBe(0x3b);
    expect(scancodeForCode('F12')).toBe(0x58);
  });

  it('marks extended keys with the 0xE0 prefix', () => {
    expect(scancodeForCode('MetaLeft')).toBe(0xe05b);
    expect(scancodeForCode('MetaRight')).toBe(0xe05c);
    expect(scancodeForCode('PrintScreen')).toBe(0xe037);
    expect(scancodeForCode('ControlRight')).toBe(0xe01d);
    expect(scancodeForCode('AltRight')).toBe(0xe038);
    expect(scancodeForCode('NumpadEnter')).toBe(0xe01c);
    expect(scancodeForCode('ArrowUp')).toBe(0xe048);
    expect(scancodeForCode('Delete')).toBe(0xe053);
    expect(isExtended(0xe053)).toBe(true);
    expect(isExtended(0x53)).toBe(false); // NumpadDecimal shares the low byte
    expect(scancodeForCode('NumpadDecimal')).toBe(0x53);
  });

  it('accepts legacy aliases and rejects unknown codes', () => {
    expect(scancodeForCode('OSLeft')).toBe(0xe05b);
    expect(scancodeForCode('Pause')).toBeUndefined();
    expect(scancodeForCode('Nope')).toBeUndefined();
  });

  it('has no duplicate scancodes', () => {
    const values = Object.values(CODE_TO_SCANCODE);
    expect(new Set(values).size).toBe(values.length);
  });
});

describe('combo parser', () => {
  it('parses friendly names left to right', () => {
    expect(parseCombo('ctrl+alt+delete')).toEqual(['ControlLeft', 'AltLeft', 'Delete']);
    expect(parseCombo('win+r')).toEqual(['MetaLeft', 'KeyR']);
    expect(parseCombo('enter')).toEqual(['Enter']);
    expect(parseCombo('alt+tab')).toEqual(['AltLeft', 'Tab']);
    expect(parseCombo('Ctrl+Shift+Esc')).toEqual(['ControlLeft', 'ShiftLeft', 'Escape']);
    expect(parseCombo('ctrl + c')).toEqual(['ControlLeft', 'KeyC']);
    expect(parseCombo('F5')).toEqual(['F5']);
    expect(parseCombo('shift+F10')).toEqual(['ShiftLeft', 'F10']);
    expect(parseCombo('KeyA')).toEqual(['KeyA']);
    expect(parseCombo('printscreen')).toEqual(['PrintScreen']);
    expect(parseCombo('ctrl+1')).toEqual(['ControlLeft', 'Digit1']);
    expect(parseCombo('ctrl++')).toEqual(['ControlLeft', 'NumpadAdd']);
    expect(parseCombo('ctrl+/')).toEqual(['ControlLeft', 'Slash']);
  });

  it('presses left to right and releases in reverse', () => {
    expect(comboToStrokes('ctrl+alt+delete')).toEqual([
      { scancode: 0x1d, down: true },
      { scancode: 0x38, down: true },
      { scancode: 0xe053, down: true },
      { scancode: 0xe053, down: false },
      { scancode: 0x38, down: false },
      { scancode: 0x1d, down: false },
    ]);
    expect(comboToStrokes('win+r')).toEqual([
      { scancode: 0xe05b, down: true },
      { scancode: 0x13, down: true },
      { scancode: 0x13, down: false },
      { scancode: 0xe05b, down: false },
    ]);
    expect(comboToStrokes('enter')).toEqual([
      { scancode: 0x1c, down: true },
      { scancode: 0x1c, down: false },
    ]);
  });

  it('rejects unknown keys and empty combos with EINVAL', () => {
    expect(() => parseCombo('ctrl+banana')).toThrow(KeyComboError);
    expect(() => parseCombo('')).toThrow(/empty/);
    try {
      parseCombo('hyper+x');
    } catch (e) {
      expect((e as KeyComboError).code).toBe('EINVAL');
      expect((e as Error).message).toContain('hyper');
    }
  });
});

describe('US layout typing', () => {
  it('types plain and shifted characters', () => {
    expect(usLayoutStrokes('a')).toEqual([
      { scancode: 0x1e, down: true },
      { scancode: 0x1e, down: false },
    ]);
    expect(usLayoutStrokes('A')).toEqual([
      { scancode: 0x2a, down: true },
      { scancode: 0x1e, down: true },
      { scancode: 0x1e, down: false },
      { scancode: 0x2a, down: false },
    ]);
    expect(usLayoutStrokes('!')?.[1]?.scancode).toBe(0x02);
    expect(usLayoutStrokes('\n')?.[0]?.scancode).toBe(0x1c);
    expect(usLayoutStrokes(' ')?.[0]?.scancode).toBe(0x39);
    expect(usLayoutStrokes('é')).toBeUndefined();
  });
});
