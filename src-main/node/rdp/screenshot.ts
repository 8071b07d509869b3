import { availableParallelism } from 'node:os';
import sharp from 'sharp';
import type { RdpFramebuffer } from './native.js';

// sharp runs libvips single-threaded on glibc Linux by default (to limit fragmentation); a
// screenshot is latency the XO waits on, so use every core: 1920x1080 → 1280x720 went from
// ~28 ms to ~19 ms p50 on 2 loaded cores.
sharp.concurrency(availableParallelism());
// Every screenshot starts from a fresh framebuffer copy, so libvips' operation cache never hits;
// it would only hold on to up to 50 MB of old desktops.
sharp.cache(false);

export interface Screenshot {
  mime: 'image/jpeg' | 'image/png';
  data: Buffer;
  width: number;
  height: number;
  /** Screenshot pixels per desktop pixel (≤ 1): desktop x = round(x / scale). */
  scale: number;
}

/**
 * Encodes a desktop for a person or the XO: fit within max (aspect kept, never enlarged),
 * JPEG q85 by default. The scale lets coordinates picked on the image map back exactly.
 */
export async function encodeScreenshot(
  fb: RdpFramebuffer,
  opts: { maxWidth: number; maxHeight: number; format: 'jpeg' | 'png' },
): Promise<Screenshot> {
  const scale = Math.min(1, opts.maxWidth / fb.width, opts.maxHeight / fb.height);
  const width = Math.max(1, Math.round(fb.width * scale));
  const height = Math.max(1, Math.round(fb.height * scale));
  // Packed RGB (getFramebuffer('rgb')) is the fast input: with a 4th band libvips resizes with
  // alpha premultiplication — 17 ms instead of 8 ms for 1920x1080 → 1280x720 on 2 cores.
  let img = sharp(fb.data, { raw: { width: fb.width, height: fb.height, channels: fb.channels } });
  if (fb.channels === 4) img = img.removeAlpha();
  // Lanczos keeps small text legible for the XO. Huffman optimisation is off: it cost ~5 ms of
  // ~23 (1920x1080 → 1280x720 on 2 cores) for 4% fewer bytes.
  if (scale < 1) img = img.resize(width, height, { fit: 'fill', kernel: 'lanczos3' });
  const data = opts.format === 'png' ? await img.png().toBuffer() : await img.jpeg({ quality: 85, optimiseCoding: false }).toBuffer();
  return { mime: opts.format === 'png' ? 'image/png' : 'image/jpeg', data, width, height, scale: width / fb.width };
}

/**
 * Maps a point on a screenshot back to the desktop, refusing points outside the image. The XO's
 * clicks and the tests both go through here, so they cannot disagree about rounding.
 */
export function toDesktopPoint(
  shot: { width: number; height: number; scale: number; desktopWidth: number; desktopHeight: number },
  x: number,
  y: number,
): { x: number; y: number } | null {
  if (!Number.isFinite(x) || !Number.isFinite(y) || x < 0 || y < 0 || x >= shot.width || y >= shot.height) return null;
  return {
    x: Math.min(Math.round(x / shot.scale), shot.desktopWidth - 1),
    y: Math.min(Math.round(y / shot.scale), shot.desktopHeight - 1),
  };
}
