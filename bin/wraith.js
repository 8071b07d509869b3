#!/usr/bin/env node
// The `wraith` command: runs the compiled CLI (npm run build:main produces dist/main).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const server = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main', 'server');
const cli = join(server, 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write(JSON.stringify({ code: 'EUNAVAILABLE', message: 'Wraith is not built: run `npm run build` in ' + join(dirname(fileURLToPath(import.meta.url)), '..') }) + '\n');
  process.exit(1);
}
// The host runs under its own V8 heap flags (src-main/server/host-heap.ts says why); started
// without them, `serve` runs itself again with them.
if (process.argv[2] === 'serve') {
  const heap = await import(pathToFileURL(join(server, 'host-heap.js')).href);
  if (heap.missingHostHeapFlags().length > 0) await heap.runUnderHostHeapFlags();
}
await import(pathToFileURL(cli).href);
