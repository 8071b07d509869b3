import { onBeforeUnmount, ref } from 'vue';
import type { Input } from '@common/contract/index.js';
import { useHost } from '../../transport/index.js';

type MouseButton = Input<'rdp.mouse'>['button'];

const BUTTONS: Record<number, MouseButton> = { 0: 'left', 1: 'middle', 2: 'right' };
/** Pixels of wheel travel per notch (Chromium reports 100 per notch at 100% zoom). */
const PIXELS_PER_NOTCH = 100;
const LINES_PER_NOTCH = 3;

/** The combination that gives the keyboard back to Wraith: Ctrl+Alt+Enter. */
export function isReleaseCombo(ev: KeyboardEvent): boolean {
  return ev.ctrlKey && ev.altKey && (ev.code === 'Enter' || ev.code === 'NumpadEnter');
}

/**
 * Keyboard and mouse of an RDP canvas: keys by KeyboardEvent.code (the host maps them to
 * scancodes), mouse in desktop pixels through `toDesktop` (which knows the view's scale), moves
 * coalesced to one per animation frame, wheel in notches. Keys held when focus leaves are
 * released on the remote side, so nothing stays stuck down.
 */
export function useRdpInput(opts: {
  sessionId: () => string | null;
  enabled: () => boolean;
  toDesktop: (clientX: number, clientY: number) => { x: number; y: number } | null;
  onRelease: () => void;
}) {
  const host = useHost();
  const captured = ref(false);
  const held = new Set<string>();
  let pendingMove: { x: number; y: number } | null = null;
  let lastMove: { x: number; y: number } | null = null;
  let raf = 0;
  let wheelX = 0;
  let wheelY = 0;

  function send(params: Omit<Input<'rdp.mouse'>, 'sessionId' | 'button' | 'delta' | 'horizontal'> & Partial<Input<'rdp.mouse'>>): void {
    const sessionId = opts.sessionId();
    if (!sessionId || !opts.enabled()) return;
    void host.call('rdp.mouse', { sessionId, button: 'left', delta: 0, horizontal: false, ...params }).catch(() => undefined);
  }

  function key(code: string, down: boolean): void {
    const sessionId = opts.sessionId();
    if (!sessionId || !opts.enabled()) return;
    void host.call('rdp.key', { sessionId, code, down }).catch(() => undefined);
  }

  function flushMove(): void {
    if (raf) cancelAnimationFrame(raf);
    raf = 0;
    const p = pendingMove;
    pendingMove = null;
    if (!p || (lastMove && lastMove.x === p.x && lastMove.y === p.y)) return;
    lastMove = p;
    send({ action: 'move', x: p.x, y: p.y });
  }

  function releaseAll(): void {
    for (const code of held) key(code, false);
    held.clear();
  }

  function onKeydown(ev: KeyboardEvent): void {
    if (isReleaseCombo(ev)) {
      ev.preventDefault();
      releaseAll();
      opts.onRelease();
      return;
    }
    // Everything else belongs to the remote desktop, not the browser (Tab, F5, Ctrl+F, …).
    ev.preventDefault();
    ev.stopPropagation();
    if (!ev.code) return;
    held.add(ev.code);
    key(ev.code, true);
  }

  function onKeyup(ev: KeyboardEvent): void {
    ev.preventDefault();
    ev.stopPropagation();
    if (!ev.code || !held.has(ev.code)) return;
    held.delete(ev.code);
    key(ev.code, false);
  }

  function onFocus(): void {
    captured.value = true;
  }

  function onBlur(): void {
    captured.value = false;
    releaseAll();
  }

  function onPointerMove(ev: PointerEvent): void {
    const p = opts.toDesktop(ev.clientX, ev.clientY);
    if (!p) return;
    pendingMove = p;
    if (!raf) raf = requestAnimationFrame(flushMove);
  }

  function onPointerDown(ev: PointerEvent): void {
    const button = BUTTONS[ev.button];
    const p = opts.toDesktop(ev.clientX, ev.clientY);
    if (!button || !p) return;
    const target = ev.currentTarget;
    if (target instanceof HTMLElement) {
      target.focus({ preventScroll: true });
      target.setPointerCapture(ev.pointerId);
    }
    ev.preventDefault();
    pendingMove = p;
    flushMove();
    send({ action: 'down', x: p.x, y: p.y, button });
  }

  function onPointerUp(ev: PointerEvent): void {
    const button = BUTTONS[ev.button];
    const p = opts.toDesktop(ev.clientX, ev.clientY);
    if (!button || !p) return;
    ev.preventDefault();
    pendingMove = p;
    flushMove();
    send({ action: 'up', x: p.x, y: p.y, button });
  }

  function onWheel(ev: WheelEvent): void {
    const p = opts.toDesktop(ev.clientX, ev.clientY);
    if (!p) return;
    ev.preventDefault();
    const unit = ev.deltaMode === WheelEvent.DOM_DELTA_LINE ? PIXELS_PER_NOTCH / LINES_PER_NOTCH : ev.deltaMode === WheelEvent.DOM_DELTA_PAGE ? PIXELS_PER_NOTCH * 3 : 1;
    wheelY += ev.deltaY * unit;
    wheelX += ev.deltaX * unit;
    const ny = Math.trunc(wheelY / PIXELS_PER_NOTCH);
    const nx = Math.trunc(wheelX / PIXELS_PER_NOTCH);
    if (ny) {
      wheelY -= ny * PIXELS_PER_NOTCH;
      send({ action: 'wheel', x: p.x, y: p.y, delta: Math.max(-100, Math.min(100, ny)) });
    }
    if (nx) {
      wheelX -= nx * PIXELS_PER_NOTCH;
      send({ action: 'wheel', x: p.x, y: p.y, delta: Math.max(-100, Math.min(100, nx)), horizontal: true });
    }
  }

  onBeforeUnmount(() => {
    if (raf) cancelAnimationFrame(raf);
    releaseAll();
  });

  return {
    captured,
    listeners: {
      keydown: onKeydown,
      keyup: onKeyup,
      focus: onFocus,
      blur: onBlur,
      pointermove: onPointerMove,
      pointerdown: onPointerDown,
      pointerup: onPointerUp,
      wheel: onWheel,
      contextmenu: (ev: Event) => ev.preventDefault(),
    },
  };
}
