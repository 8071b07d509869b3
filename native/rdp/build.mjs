#!/usr/bin/env node
// Builds the FreeRDP addon (native/rdp/build/Release/wraith_rdp.node) when FreeRDP's
// development files are present. Without them the install still succeeds: the app
// runs and RDP tabs say what to install. Run from anywhere: `node native/rdp/build.mjs`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const log = (msg) => console.log(`[wraith] native RDP addon: ${msg}`);

const INSTALL_HINT =
  'install FreeRDP development files, e.g. on Debian/Ubuntu: ' +
  'sudo apt-get install freerdp2-dev libssl-dev pkg-config build-essential ' +
  '(FreeRDP 3: freerdp3-dev), then run `npm rebuild` or `node native/rdp/build.mjs`';

if (process.env.WRAITH_SKIP_RDP_BUILD === '1') {
  log('skipped (WRAITH_SKIP_RDP_BUILD=1)');
  process.exit(0);
}

function pkgConfigOk(pkgs) {
  const r = spawnSync('pkg-config', ['--exists', ...pkgs], { stdio: 'ignore' });
  return r.status === 0;
}

const candidates = [
  ['freerdp3', 'freerdp-client3', 'winpr3'],
  ['freerdp2', 'freerdp-client2', 'winpr2'],
];
const pkgs = candidates.find(pkgConfigOk);
if (!pkgs) {
  log(`FreeRDP not found by pkg-config, so RDP is disabled. To enable it, ${INSTALL_HINT}.`);
  process.exit(0);
}
const version = spawnSync('pkg-config', ['--modversion', pkgs[0]], { encoding: 'utf8' }).stdout.trim();

let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js');
} catch {
  log('node-gyp is not installed (it is a devDependency); RDP is disabled. Run `npm install` with dev dependencies.');
  process.exit(0);
}

// OpenSSL hashes the certificate when FreeRDP hands over a PEM instead of a fingerprint.
const haveOpenssl = pkgConfigOk(['openssl']);
const allPkgs = haveOpenssl ? [...pkgs, 'openssl'] : pkgs;
const args = [gyp, 'rebuild', '--release', `--frdp_pkgs=${allPkgs.join(' ')}`, `--have_openssl=${haveOpenssl ? 1 : 0}`];
// Use the local Node headers when the distribution ships them (no download needed).
const nodeDir = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(path.join(nodeDir, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${nodeDir}`);
}
log(`building against ${pkgs[0]} ${version}`);
const r = spawnSync(process.execPath, args, { cwd: here, stdio: 'inherit' });
if (r.status !== 0) {
  log(`build FAILED (exit ${r.status}); RDP is disabled. Check the compiler output above; ${INSTALL_HINT}.`);
  process.exit(0);
}
log('built build/Release/wraith_rdp.node');
