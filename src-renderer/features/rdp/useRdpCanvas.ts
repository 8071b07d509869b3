import { markRaw, onBeforeUnmount, onMounted, ref, shallowRef, watch } from 'vue';
import type { EventPayload } from '@common/contract/index.js';
import { useHost } from '../../transport/index.js';

/** How many frame events the host lets us owe before it merges and holds (rdp-service FRAME_CREDITS). */
const HOST_FRAME_CREDITS = 2;

export interface DesktopSize {
  width: number;
  height: number;
}

type Rect = EventPayload<'rdp.frame'>['rects'][number];

/**
 * RGBA bytes as ImageData without copying when they already are what canvas wants. FreeRDP's
 * GDI leaves the alpha byte of RGBA32 at 0 on some servers; an opaque picture is what the
 * desktop is, so such pixels are made opaque (only then, in place on our own copy).
 */
function toImageData(data: Uint8Array, width: number, height: number): ImageData {
  const n = width * height * 4;
  const buffer = data.buffer;
  const opaque = n > 3 && data[3] === 255;
  if (opaque && buffer instanceof ArrayBuffer) return new ImageData(new Uint8ClampedArray(buffer, data.byteOffset, n), width, height);
  const copy = new Uint8ClampedArray(n);
  copy.set(data.subarray(0, n));
  if (!opaque) for (let i = 3; i < n; i += 4) copy[i] = 255;
  return new ImageData(copy, width, height);
}

/**
 * The canvas of an RDP tab. Paints the whole desktop once (rdp.framebuffer), then only the dirty
 * rectangles of each rdp.frame event, acknowledging every event after painting it (the host's
 * credit flow control). The canvas and its 2D context are raw objects, never reactive state.
 */
export function useRdpCanvas(sessionId: () => string | null) {
  const host = useHost();
  const canvas = shallowRef<HTMLCanvasElement | null>(null);
  let ctx: CanvasRenderingContext2D | null = null;
  /** The desktop size in pixels; null until the first full paint. */
  const size = ref<DesktopSize | null>(null);
  /** Frames painted (tests and diagnostics read it from data-frames). */
  const frames = ref(0);
  let generation = 0;

  function context(): CanvasRenderingContext2D | null {
    const el = canvas.value;
    if (!el) return null;
    if (!ctx || ctx.canvas !== el) {
      const c = el.getContext('2d', { alpha: false });
      ctx = c ? markRaw(c) : null;
    }
    return ctx;
  }

  function setSize(width: number, height: number): void {
    const el = canvas.value;
    if (el && (el.width !== width || el.height !== height)) {
      el.width = width;
      el.height = height;
    }
    if (size.value?.width !== width || size.value?.height !== height) size.value = { width, height };
  }

  /** Fetches and paints the whole desktop; frames that arrive meanwhile paint on top in order. */
  async function paintFull(): Promise<void> {
    const id = sessionId();
    if (!id) return;
    const mine = ++generation;
    const fb = await host.call('rdp.framebuffer', { sessionId: id });
    if (mine !== generation || id !== sessionId()) return;
    setSize(fb.width, fb.height);
    context()?.putImageData(toImageData(fb.data, fb.width, fb.height), 0, 0);
    frames.value++;
    // Frame events sent before we knew this session (while rdp.open ran) were never acked; the
    // full paint covers them, so give the host its credits back.
    for (let i = 0; i < HOST_FRAME_CREDITS; i++) void host.call('rdp.ack', { sessionId: id }).catch(() => undefined);
  }

  function paintRect(c: CanvasRenderingContext2D, r: Rect): void {
    if (r.width <= 0 || r.height <= 0 || r.data.byteLength < r.width * r.height * 4) return;
    c.putImageData(toImageData(r.data, r.width, r.height), r.x, r.y);
  }

  const offFrame = host.on('rdp.frame', (p) => {
    if (p.sessionId !== sessionId()) return;
    const c = context();
    if (c && size.value) {
      for (const r of p.rects) paintRect(c, r);
      frames.value++;
    }
    void host.call('rdp.ack', { sessionId: p.sessionId }).catch(() => undefined);
  });

  const offResized = host.on('rdp.resized', (p) => {
    if (p.sessionId !== sessionId()) return;
    setSize(p.width, p.height);
    void paintFull().catch(() => undefined);
  });

  // Frames the host sent while the link to it was down are lost, and so are the credits they
  // took: paint the desktop whole once the link is back, which gives the credits back too.
  const offOpen = host.onOpen((reconnected) => {
    if (reconnected && sessionId()) void paintFull().catch(() => undefined);
  });

  // A new session id (opened, or reattached after a page reload): paint it whole.
  watch(
    sessionId,
    (id) => {
      if (id) void paintFull().catch(() => undefined);
    },
    { flush: 'post' },
  );
  watch(canvas, () => {
    ctx = null;
  });
  onMounted(() => {
    if (sessionId()) void paintFull().catch(() => undefined);
  });

  onBeforeUnmount(() => {
    offFrame();
    offResized();
    offOpen();
    generation++;
    ctx = null;
  });

  /** The canvas pixel under a point of the page, for mouse input (whatever the CSS scale). */
  function toDesktop(clientX: number, clientY: number): { x: number; y: number } | null {
    const el = canvas.value;
    const s = size.value;
    if (!el || !s) return null;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 0 || rect.height <= 0) return null;
    const x = Math.floor(((clientX - rect.left) / rect.width) * s.width);
    const y = Math.floor(((clientY - rect.top) / rect.height) * s.height);
    return { x: Math.max(0, Math.min(s.width - 1, x)), y: Math.max(0, Math.min(s.height - 1, y)) };
  }

  return { canvas, size, frames, paintFull, toDesktop };
}
