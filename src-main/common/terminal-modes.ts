/**
 * What puts a terminal back as a fresh one has it, once the program that set its modes is gone (a
 * full-screen program whose connection dropped never undid them): the mouse would go on sending
 * reports that the next shell runs as commands, the cursor stay hidden, the screen stay the
 * alternate one. The scrollback stays. The host puts it in a session's output when its program
 * goes (so a view that reads the output back after a reload ends as a live one did), and a view
 * writes it again before its notice.
 * - ESC 7 then ESC[?1049l: back to the normal screen and where its cursor was; saving first
 *   makes the restore a no-op when the normal screen is already shown.
 * - ESC[!p (DECSTR): cursor shown, colours and charsets reset, scroll region whole, and the
 *   modes bracketed paste, application cursor keys and keypad, focus reports, insert, origin
 *   and synchronized output off, cursor shape back to the setting.
 * - Mouse tracking off in every protocol and encoding (DECSTR leaves it).
 */
export const FRESH_MODES = '\x1b7\x1b[?1049l\x1b[!p\x1b[?9;1000;1002;1003;1005;1006;1015;1016l';
