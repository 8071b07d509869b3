import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [vue()],
  test: {
    include: ['tests/**/*.test.ts'],
    // Real servers (sshd, RDP) and Chromium share 2 cores: keep files from starving each other.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { WRAITH_STRICT_EVENTS: '1' },
  },
});
