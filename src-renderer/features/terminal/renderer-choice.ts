/**
 * Whether WebGL here is drawn by a GPU. Without one, browsers fall back to a software rasteriser
 * (SwiftShader in Chromium, llvmpipe/softpipe in Mesa, "Microsoft Basic Render" on Windows), and
 * every frame of xterm's WebGL renderer is then read back pixel by pixel: a flood ran ~4× slower
 * than with the DOM renderer in headless Chromium (3 vs 11 MiB/s, bench/terminal-render.ts).
 * That is the case of `wraith serve` opened from a VM, a remote desktop or a browser with
 * hardware acceleration off. Decided once per page.
 */
const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|basic render/i;

let answer: boolean | null = null;

export function gpuDrawsWebgl(): boolean {
  answer ??= probe();
  return answer;
}

/** The renderer string of a throw-away WebGL2 context (unmasked where the browser allows). */
export function webglRendererName(): string | null {
  try {
    const gl = document.createElement('canvas').getContext('webgl2');
    if (!gl) return null;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return name;
  } catch {
    return null;
  }
}

function probe(): boolean {
  const name = webglRendererName();
  return name !== null && !SOFTWARE.test(name);
}
