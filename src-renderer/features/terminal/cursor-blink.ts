/**
 * The blinking cursor of xterm's DOM renderer, driven by a timer instead of xterm's CSS animation.
 *
 * xterm blinks the DOM renderer's cursor with a `1s step-end infinite` CSS animation of colours,
 * which Chromium does not run on the compositor: a focused terminal sitting idle made the page
 * draw 60 frames a second (181 frames in 3 s, 278 ms of the page's main thread, headless
 * Chromium), and the page drew them during a folder upload too. The DOM renderer is the one used
 * where there is no GPU (a VM, a remote desktop: renderer-choice.ts), where that CPU is dearest.
 * Here the cursor stays steady in xterm's eyes and a class on the terminal's element hides it
 * every other BLINK_MS, a style change twice a second. (The WebGL renderer blinks from a timer of
 * its own and keeps xterm's option.)
 */
import type { Terminal } from '@xterm/xterm';

/** The half-period of the blink; xterm's WebGL renderer uses 600 ms. */
export const BLINK_MS = 600;
/** On the element xterm renders into while the cursor is in its hidden half (theme.css). */
export const CURSOR_HIDDEN_CLASS = 'cursor-blink-off';

const blinkers = new WeakMap<Terminal, DomCursorBlink>();

/** Whether the terminal's cursor blinks now, whichever renderer draws it. */
export function cursorBlinks(term: Terminal): boolean {
  return (term.options.cursorBlink ?? false) || (blinkers.get(term)?.enabled ?? false);
}

export class DomCursorBlink {
  private on = false;
  private focused = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly stop: () => void;

  constructor(
    private readonly term: Terminal,
    private readonly el: HTMLElement,
  ) {
    blinkers.set(term, this);
    const textarea = term.textarea;
    const onFocus = () => this.setFocused(true);
    const onBlur = () => this.setFocused(false);
    textarea?.addEventListener('focus', onFocus);
    textarea?.addEventListener('blur', onBlur);
    // A key shows the cursor at once and starts the blink over, as xterm does.
    const typed = term.onData(() => this.restart());
    this.focused = textarea !== undefined && document.activeElement === textarea;
    this.stop = () => {
      textarea?.removeEventListener('focus', onFocus);
      textarea?.removeEventListener('blur', onBlur);
      typed.dispose();
    };
  }

  get enabled(): boolean {
    return this.on;
  }

  set enabled(on: boolean) {
    this.on = on;
    this.update();
  }

  dispose(): void {
    this.on = false;
    this.update();
    this.stop();
    if (blinkers.get(this.term) === this) blinkers.delete(this.term);
  }

  private setFocused(focused: boolean): void {
    this.focused = focused;
    this.update();
  }

  private restart(): void {
    if (!this.timer) return;
    this.halt();
    this.update();
  }

  /** Blinks only while it is on and the terminal has the focus (xterm shows an outline otherwise). */
  private update(): void {
    const want = this.on && this.focused;
    if (want && !this.timer) this.timer = setInterval(() => this.el.classList.toggle(CURSOR_HIDDEN_CLASS), BLINK_MS);
    else if (!want && this.timer) this.halt();
  }

  private halt(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.el.classList.remove(CURSOR_HIDDEN_CLASS);
  }
}
