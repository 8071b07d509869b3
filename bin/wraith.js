#!/usr/bin/env node
// The `wraith` command: runs the compiled CLI (npm run build:main produces dist/main).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main', 'server', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write(JSON.stringify({ code: 'EUNAVAILABLE', message: 'Wraith is not built: run `npm run build` in ' + join(dirname(fileURLToPath(import.meta.url)), '..') }) + '\n');
  process.exit(1);
}
await import(pathToFileURL(cli).href);
