import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vitest/config';

// The local shells the tests start read $HOME/.bashrc. This machine's own (pyenv init) rehashes
// at every start, and a shell closed in that moment leaves pyenv's lock behind, after which every
// new shell waits a minute for it: the tests run under a home of their own, with an empty .bashrc.
// The shells still read /etc/bash.bashrc, as any user's do.
const testHome = mkdtempSync(join(tmpdir(), 'wraith-test-home-'));
writeFileSync(join(testHome, '.bashrc'), '');

export default defineConfig({
  plugins: [vue()],
  // As vite.config.ts: renderer modules under test import the contract as @common.
  resolve: { alias: { '@common': fileURLToPath(new URL('./src-main/common', import.meta.url)) } },
  test: {
    include: ['tests/**/*.test.ts'],
    // Real servers (sshd, RDP) and Chromium share 2 cores: keep files from starving each other.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { WRAITH_STRICT_EVENTS: '1', HOME: testHome },
  },
});
