import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// The renderer is one static bundle served by `wraith serve` (http://) and loaded by Electron
// from file://, so every URL in it is relative (`base: './'`).
export default defineConfig({
  root: here('./src-renderer'),
  base: './',
  plugins: [vue()],
  resolve: {
    alias: { '@common': here('./src-main/common') },
  },
  build: {
    outDir: here('./dist/renderer'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // xterm.js and its addons are one large, cacheable chunk; keep warnings for real surprises.
    chunkSizeWarningLimit: 1200,
  },
  server: { strictPort: false },
});
