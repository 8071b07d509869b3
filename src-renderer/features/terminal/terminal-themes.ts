import type { ITheme } from '@xterm/xterm';
import type { Settings } from '@common/contract/settings.js';

export type TerminalThemeName = Settings['terminal.theme'];

/**
 * The terminal colour schemes a person can pick in Settings. Wraith's own matches the window;
 * the others are the published palettes (Solarized by Ethan Schoonover, Dracula), with the ANSI
 * mapping their terminal ports use, so programs that were tuned for them look as intended.
 */
export const TERMINAL_THEMES: Record<TerminalThemeName, { label: string; theme: ITheme; boldIsBright: boolean }> = {
  wraith: {
    label: 'Wraith (dark)',
    boldIsBright: true,
    theme: {
      background: '#0f1218',
      foreground: '#d7dce5',
      cursor: '#8ab4ff',
      cursorAccent: '#0f1218',
      selectionBackground: '#2f4a7a',
      black: '#1b1f27', red: '#f0717a', green: '#8fd694', yellow: '#e8c872', blue: '#7aa7ff', magenta: '#c79bf2', cyan: '#6fd3e0', white: '#d7dce5',
      brightBlack: '#5b6475', brightRed: '#ff8f96', brightGreen: '#a8e6ad', brightYellow: '#f2d88f', brightBlue: '#9cc0ff', brightMagenta: '#d9b6ff', brightCyan: '#92e6f0', brightWhite: '#ffffff',
    },
  },
  'solarized-dark': {
    label: 'Solarized Dark',
    // Solarized's "bright" slots hold its greys: bold-as-bright turns `ls` folders and prompts grey.
    boldIsBright: false,
    theme: {
      background: '#002b36',
      foreground: '#839496',
      cursor: '#93a1a1',
      cursorAccent: '#002b36',
      selectionBackground: '#274642',
      black: '#073642', red: '#dc322f', green: '#859900', yellow: '#b58900', blue: '#268bd2', magenta: '#d33682', cyan: '#2aa198', white: '#eee8d5',
      brightBlack: '#002b36', brightRed: '#cb4b16', brightGreen: '#586e75', brightYellow: '#657b83', brightBlue: '#839496', brightMagenta: '#6c71c4', brightCyan: '#93a1a1', brightWhite: '#fdf6e3',
    },
  },
  'solarized-light': {
    label: 'Solarized Light',
    boldIsBright: false,
    theme: {
      background: '#fdf6e3',
      foreground: '#657b83',
      cursor: '#586e75',
      cursorAccent: '#fdf6e3',
      selectionBackground: '#e0dccb',
      black: '#073642', red: '#dc322f', green: '#859900', yellow: '#b58900', blue: '#268bd2', magenta: '#d33682', cyan: '#2aa198', white: '#eee8d5',
      brightBlack: '#002b36', brightRed: '#cb4b16', brightGreen: '#586e75', brightYellow: '#657b83', brightBlue: '#839496', brightMagenta: '#6c71c4', brightCyan: '#93a1a1', brightWhite: '#fdf6e3',
    },
  },
  dracula: {
    label: 'Dracula',
    boldIsBright: true,
    theme: {
      background: '#282a36',
      foreground: '#f8f8f2',
      cursor: '#f8f8f2',
      cursorAccent: '#282a36',
      selectionBackground: '#44475a',
      black: '#21222c', red: '#ff5555', green: '#50fa7b', yellow: '#f1fa8c', blue: '#bd93f9', magenta: '#ff79c6', cyan: '#8be9fd', white: '#f8f8f2',
      brightBlack: '#6272a4', brightRed: '#ff6e6e', brightGreen: '#69ff94', brightYellow: '#ffffa5', brightBlue: '#d6acff', brightMagenta: '#ff92df', brightCyan: '#a4ffff', brightWhite: '#ffffff',
    },
  },
};

export function terminalTheme(name: TerminalThemeName): ITheme {
  return (TERMINAL_THEMES[name] ?? TERMINAL_THEMES.wraith).theme;
}

/** xterm's drawBoldTextInBrightColors for the scheme. */
export function boldIsBright(name: TerminalThemeName): boolean {
  return (TERMINAL_THEMES[name] ?? TERMINAL_THEMES.wraith).boldIsBright;
}
