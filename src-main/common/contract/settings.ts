import { z } from 'zod';
import { Empty, event, method, patchOf } from './define.js';

/** Every user setting, with its type and default. Unknown keys are refused. */
export const SettingsSchema = z.object({
  /** The size chosen in Settings; Ctrl+0 in a terminal comes back to it. */
  'terminal.fontSize': z.number().int().min(6).max(48).default(14),
  /**
   * Ctrl+= / Ctrl+- steps on top of terminal.fontSize, for every terminal, kept across restarts as
   * a browser keeps a page's zoom. Apart from the font size so that Ctrl+0 (back to 0) never
   * loses the size the user chose in Settings.
   */
  'terminal.fontZoom': z.number().int().min(-42).max(42).default(0),
  /**
   * A CSS font-family list. Never blank: xterm then takes the page's proportional font and the
   * columns no longer line up.
   */
  'terminal.fontFamily': z
    .string()
    .trim()
    .min(1, "Name at least one font, e.g. 'DejaVu Sans Mono', monospace; without one the terminal uses a proportional font.")
    .max(200, 'At most 200 characters.')
    .default("'JetBrains Mono', 'DejaVu Sans Mono', Menlo, Consolas, monospace"),
  /**
   * Row height as a multiple of the font's. Above 1 because at 1 the DOM renderer's rows are a
   * pixel short for DejaVu Sans Mono (the Linux fallback) at 10, 14 and 19 px, and `_` falls
   * outside its row; at 1.1 it is inside at every size from 8 to 48 px (measured in Chromium).
   */
  'terminal.lineHeight': z.number().min(1).max(2).default(1.1),
  'terminal.scrollback': z.number().int().min(0).max(200_000).default(10_000),
  'terminal.copyOnSelect': z.boolean().default(false),
  /**
   * A program in a terminal may put text on the clipboard with OSC 52, as vim, neovim and tmux do
   * over SSH (never read it). Each tab says so the first time.
   */
  'terminal.osc52Copy': z.boolean().default(true),
  /** auto: WebGL when the GPU draws it, the DOM renderer when WebGL is software (SwiftShader, llvmpipe). */
  'terminal.renderer': z.enum(['auto', 'webgl', 'dom']).default('auto'),
  'terminal.confirmMultilinePaste': z.boolean().default(true),
  /** Colour scheme (src-renderer/features/terminal/terminal-themes.ts). */
  'terminal.theme': z.enum(['wraith', 'solarized-dark', 'solarized-light', 'dracula']).default('wraith'),
  'terminal.cursorStyle': z.enum(['block', 'bar', 'underline']).default('block'),
  'terminal.cursorBlink': z.boolean().default(true),
  /** What a right click does: the menu, or paste (PuTTY, MobaXterm). Shift+right-click always opens the menu. */
  'terminal.rightClick': z.enum(['menu', 'paste']).default('menu'),
  /** xterm.js's screen reader support: the rows as an accessibility tree, new output announced. Costs speed on floods. */
  'terminal.screenReaderMode': z.boolean().default(false),
  'terminal.ringBufferBytes': z.number().int().min(64 * 1024).max(64 * 1024 * 1024).default(1024 * 1024),
  'ui.leftPanelWidth': z.number().int().min(160).max(800).default(260),
  'ui.rightPanelWidth': z.number().int().min(240).max(1200).default(320),
  'ui.bottomPanelHeight': z.number().int().min(120).max(1200).default(260),
  /**
   * Closing a tab whose session runs (Ctrl+W, its ×, a middle click) asks first, as closing
   * several does: one stray key would otherwise end a shell and what runs in it.
   */
  'ui.confirmCloseRunningTab': z.boolean().default(true),
  /**
   * The Files panel's order (a column header's click) and whether it lists dot-files: one choice
   * for every panel, kept as the user left it when a panel closes and the page reloads.
   */
  'sftp.sortBy': z.enum(['name', 'size', 'mtime']).default('name'),
  'sftp.sortDescending': z.boolean().default(false),
  'sftp.showHidden': z.boolean().default(false),
  /** The Files panel's width, one for every tab's panel, as its splitter was last left. */
  'sftp.panelWidth': z.number().int().min(260).max(900).default(380),
  'ssh.keepaliveIntervalMs': z.number().int().min(0).max(600_000).default(15_000),
});
export type Settings = z.infer<typeof SettingsSchema>;
export type SettingKey = keyof Settings;
export const SETTING_KEYS = Object.keys(SettingsSchema.shape) as SettingKey[];
export const DEFAULT_SETTINGS: Settings = SettingsSchema.parse({});

/** The font size terminals draw with: the size chosen in Settings plus the zoom steps, in range. */
export function terminalFontSize(s: Pick<Settings, 'terminal.fontSize' | 'terminal.fontZoom'>): number {
  return Math.max(6, Math.min(48, s['terminal.fontSize'] + s['terminal.fontZoom']));
}

export const settingsMethods = {
  'settings.get': method(Empty.optional(), SettingsSchema, 'All settings, defaults filled in.'),
  'settings.set': method(
    patchOf(SettingsSchema).strict(),
    SettingsSchema,
    'Changes some settings; each value is checked against its type and range.',
  ),
};

export const settingsEvents = {
  'settings.changed': event(
    SettingsSchema,
    'Settings were changed (by any window or the CLI): all of them, as settings.get returns them.',
  ),
};
