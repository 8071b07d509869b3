// KeyboardEvent.code → RDP (PC/AT set 1) scancodes, and a parser for key combos
// such as "ctrl+alt+delete", "win+r", "enter", "alt+tab".
//
// Scancodes are numbers; extended keys carry the 0xE0 prefix in the high byte
// (e.g. ArrowUp = 0xE048, PrintScreen = 0xE037). The native addon sends them
// with the RDP extended flag (KBDEXT) when the high byte is 0xE0.

export type Scancode = number;

export interface KeyStroke {
  scancode: Scancode;
  down: boolean;
}

const table: Record<string, Scancode> = {
  Escape: 0x01,
  Digit1: 0x02,
  Digit2: 0x03,
  Digit3: 0x04,
  Digit4: 0x05,
  Digit5: 0x06,
  Digit6: 0x07,
  Digit7: 0x08,
  Digit8: 0x09,
  Digit9: 0x0a,
  Digit0: 0x0b,
  Minus: 0x0c,
  Equal: 0x0d,
  Backspace: 0x0e,
  Tab: 0x0f,
  KeyQ: 0x10,
  KeyW: 0x11,
  KeyE: 0x12,
  KeyR: 0x13,
  KeyT: 0x14,
  KeyY: 0x15,
  KeyU: 0x16,
  KeyI: 0x17,
  KeyO: 0x18,
  KeyP: 0x19,
  BracketLeft: 0x1a,
  BracketRight: 0x1b,
  Enter: 0x1c,
  ControlLeft: 0x1d,
  KeyA: 0x1e,
  KeyS: 0x1f,
  KeyD: 0x20,
  KeyF: 0x21,
  KeyG: 0x22,
  KeyH: 0x23,
  KeyJ: 0x24,
  KeyK: 0x25,
  KeyL: 0x26,
  Semicolon: 0x27,
  Quote: 0x28,
  Backquote: 0x29,
  ShiftLeft: 0x2a,
  Backslash: 0x2b,
  KeyZ: 0x2c,
  KeyX: 0x2d,
  KeyC: 0x2e,
  KeyV: 0x2f,
  KeyB: 0x30,
  KeyN: 0x31,
  KeyM: 0x32,
  Comma: 0x33,
  Period: 0x34,
  Slash: 0x35,
  ShiftRight: 0x36,
  NumpadMultiply: 0x37,
  AltLeft: 0x38,
  Space: 0x39,
  CapsLock: 0x3a,
  F1: 0x3b,
  F2: 0x3c,
  F3: 0x3d,
  F4: 0x3e,
  F5: 0x3f,
  F6: 0x40,
  F7: 0x41,
  F8: 0x42,
  F9: 0x43,
  F10: 0x44,
  NumLock: 0x45,
  ScrollLock: 0x46,
  Numpad7: 0x47,
  Numpad8: 0x48,
  Numpad9: 0x49,
  NumpadSubtract: 0x4a,
  Numpad4: 0x4b,
  Numpad5: 0x4c,
  Numpad6: 0x4d,
  NumpadAdd: 0x4e,
  Numpad1: 0x4f,
  Numpad2: 0x50,
  Numpad3: 0x51,
  Numpad0: 0x52,
  NumpadDecimal: 0x53,
  IntlBackslash: 0x56,
  F11: 0x57,
  F12: 0x58,
  NumpadEqual: 0x59,
  F13: 0x64,
  F14: 0x65,
  F15: 0x66,
  F16: 0x67,
  F17: 0x68,
  F18: 0x69,
  F19: 0x6a,
  F20: 0x6b,
  F21: 0x6c,
  F22: 0x6d,
  F23: 0x6e,
  KanaMode: 0x70,
  IntlRo: 0x73,
  F24: 0x76,
  Convert: 0x79,
  NonConvert: 0x7b,
  IntlYen: 0x7d,
  NumpadComma: 0x7e,
  // extended (0xE0 prefix)
  MediaTrackPrevious: 0xe010,
  MediaTrackNext: 0xe019,
  NumpadEnter: 0xe01c,
  ControlRight: 0xe01d,
  AudioVolumeMute: 0xe020,
  LaunchApp2: 0xe021,
  MediaPlayPause: 0xe022,
  MediaStop: 0xe024,
  AudioVolumeDown: 0xe02e,
  AudioVolumeUp: 0xe030,
  BrowserHome: 0xe032,
  NumpadDivide: 0xe035,
  PrintScreen: 0xe037,
  AltRight: 0xe038,
  Home: 0xe047,
  ArrowUp: 0xe048,
  PageUp: 0xe049,
  ArrowLeft: 0xe04b,
  ArrowRight: 0xe04d,
  End: 0xe04f,
  ArrowDown: 0xe050,
  PageDown: 0xe051,
  Insert: 0xe052,
  Delete: 0xe053,
  MetaLeft: 0xe05b,
  MetaRight: 0xe05c,
  ContextMenu: 0xe05d,
  Power: 0xe05e,
  Sleep: 0xe05f,
  WakeUp: 0xe063,
  BrowserSearch: 0xe065,
  BrowserFavorites: 0xe066,
  BrowserRefresh: 0xe067,
  BrowserStop: 0xe068,
  BrowserForward: 0xe069,
  BrowserBack: 0xe06a,
  LaunchApp1: 0xe06b,
  LaunchMail: 0xe06c,
  MediaSelect: 0xe06d,
};

/** KeyboardEvent.code → scancode (0xE0xx for extended keys). Frozen. */
export const CODE_TO_SCANCODE: Readonly<Record<string, Scancode>> = Object.freeze({ ...table });

// Legacy/alias codes some browsers still report.
const codeAliases: Record<string, string> = {
  OSLeft: 'MetaLeft',
  OSRight: 'MetaRight',
  VolumeMute: 'AudioVolumeMute',
  VolumeDown: 'AudioVolumeDown',
  VolumeUp: 'AudioVolumeUp',
};

/** Scancode for a KeyboardEvent.code, or undefined when the key has no RDP scancode (e.g. Pause). */
export function scancodeForCode(code: string): Scancode | undefined {
  return table[code] ?? (codeAliases[code] ? table[codeAliases[code]] : undefined);
}

/** True when the scancode needs the RDP extended flag. */
export function isExtended(scancode: Scancode): boolean {
  return (scancode & 0xff00) === 0xe000;
}

// Friendly names used in combos ("ctrl+alt+delete"). Matched case-insensitively.
const names: Record<string, string> = {
  ctrl: 'ControlLeft',
  control: 'ControlLeft',
  lctrl: 'ControlLeft',
  rctrl: 'ControlRight',
  alt: 'AltLeft',
  lalt: 'AltLeft',
  ralt: 'AltRight',
  altgr: 'AltRight',
  option: 'AltLeft',
  shift: 'ShiftLeft',
  lshift: 'ShiftLeft',
  rshift: 'ShiftRight',
  win: 'MetaLeft',
  windows: 'MetaLeft',
  meta: 'MetaLeft',
  super: 'MetaLeft',
  cmd: 'MetaLeft',
  command: 'MetaLeft',
  lwin: 'MetaLeft',
  rwin: 'MetaRight',
  enter: 'Enter',
  return: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  space: 'Space',
  spacebar: 'Space',
  backspace: 'Backspace',
  bksp: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  insert: 'Insert',
  ins: 'Insert',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pgup: 'PageUp',
  pagedown: 'PageDown',
  pgdn: 'PageDown',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
  printscreen: 'PrintScreen',
  prtsc: 'PrintScreen',
  prtscn: 'PrintScreen',
  print: 'PrintScreen',
  capslock: 'CapsLock',
  caps: 'CapsLock',
  numlock: 'NumLock',
  scrolllock: 'ScrollLock',
  menu: 'ContextMenu',
  apps: 'ContextMenu',
  contextmenu: 'ContextMenu',
  plus: 'NumpadAdd',
  minus: 'Minus',
  '-': 'Minus',
  '=': 'Equal',
  '[': 'BracketLeft',
  ']': 'BracketRight',
  ';': 'Semicolon',
  "'": 'Quote',
  '`': 'Backquote',
  '\\': 'Backslash',
  ',': 'Comma',
  '.': 'Period',
  '/': 'Slash',
};

/** Resolve one combo element ("ctrl", "r", "F5", "KeyA", "delete") to a KeyboardEvent.code. */
export function keyNameToCode(name: string): string | undefined {
  const raw = name.trim();
  if (!raw) return undefined;
  if (scancodeForCode(raw) !== undefined) return codeAliases[raw] ?? raw; // already a code
  const lower = raw.toLowerCase();
  if (names[lower]) return names[lower];
  if (/^[a-z]$/.test(lower)) return `Key${lower.toUpperCase()}`;
  if (/^[0-9]$/.test(lower)) return `Digit${lower}`;
  const f = /^f([1-9]|1[0-9]|2[0-4])$/.exec(lower);
  if (f) return `F${f[1]}`;
  // case-insensitive match against the code table ("arrowup", "numpadenter")
  const hit = Object.keys(table).find((c) => c.toLowerCase() === lower);
  return hit;
}

export class KeyComboError extends Error {
  readonly code = 'EINVAL';
  constructor(message: string) {
    super(message);
    this.name = 'KeyComboError';
  }
}

/** Parse "ctrl+alt+delete" into KeyboardEvent.codes, left to right. */
export function parseCombo(combo: string): string[] {
  if (typeof combo !== 'string' || !combo.trim()) throw new KeyComboError('empty key combo');
  // Split on '+' but let a literal '+' key be written as "plus" (or a trailing "++").
  const parts: string[] = [];
  let cur = '';
  const s = combo.trim();
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '+' && cur.trim() !== '') {
      parts.push(cur);
      cur = '';
    } else if (ch === '+') {
      cur += 'plus';
    } else {
      cur += ch;
    }
  }
  if (cur.trim()) parts.push(cur);
  const codes: string[] = [];
  for (const p of parts) {
    const code = keyNameToCode(p);
    if (!code) throw new KeyComboError(`unknown key "${p.trim()}" in "${combo}"`);
    codes.push(code);
  }
  return codes;
}

/** Key strokes for a combo: press left to right, release in reverse. */
export function comboToStrokes(combo: string): KeyStroke[] {
  const scancodes = parseCombo(combo).map((c) => scancodeForCode(c) as Scancode);
  return [
    ...scancodes.map((scancode) => ({ scancode, down: true })),
    ...[...scancodes].reverse().map((scancode) => ({ scancode, down: false })),
  ];
}

// US-layout characters → code (+ shift), for servers that do not accept Unicode input.
const usUnshifted = "`1234567890-=qwertyuiop[]\\asdfghjkl;'zxcvbnm,./";
const usShifted = '~!@#$%^&*()_+QWERTYUIOP{}|ASDFGHJKL:"ZXCVBNM<>?';
const usCodes = [
  'Backquote', 'Digit1', 'Digit2', 'Digit3', 'Digit4', 'Digit5', 'Digit6', 'Digit7', 'Digit8', 'Digit9', 'Digit0',
  'Minus', 'Equal', 'KeyQ', 'KeyW', 'KeyE', 'KeyR', 'KeyT', 'KeyY', 'KeyU', 'KeyI', 'KeyO', 'KeyP', 'BracketLeft',
  'BracketRight', 'Backslash', 'KeyA', 'KeyS', 'KeyD', 'KeyF', 'KeyG', 'KeyH', 'KeyJ', 'KeyK', 'KeyL', 'Semicolon',
  'Quote', 'KeyZ', 'KeyX', 'KeyC', 'KeyV', 'KeyB', 'KeyN', 'KeyM', 'Comma', 'Period', 'Slash',
];

/** Key strokes typing `ch` on a US layout, or undefined when the character is not on it. */
export function usLayoutStrokes(ch: string): KeyStroke[] | undefined {
  let code: string | undefined;
  let shift = false;
  if (ch === ' ') code = 'Space';
  else if (ch === '\n' || ch === '\r') code = 'Enter';
  else if (ch === '\t') code = 'Tab';
  else {
    let i = usUnshifted.indexOf(ch);
    if (i < 0) {
      i = usShifted.indexOf(ch);
      shift = i >= 0;
    }
    if (i >= 0) code = usCodes[i];
  }
  if (!code) return undefined;
  const sc = table[code];
  const shiftSc = 0x2a; // ShiftLeft
  if (sc === undefined) return undefined;
  return shift
    ? [
        { scancode: shiftSc, down: true },
        { scancode: sc, down: true },
        { scancode: sc, down: false },
        { scancode: shiftSc, down: false },
      ]
    : [
        { scancode: sc, down: true },
        { scancode: sc, down: false },
      ];
}
