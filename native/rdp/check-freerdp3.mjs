#!/usr/bin/env node
// Proves that src/wraith_rdp.cc still builds against FreeRDP 3 on a machine that only has
// FreeRDP 2 (Debian 12). It fetches FreeRDP 3's development files from Debian 13 (trixie)
// as plain .deb files, unpacks them into a cache directory (never into the system: trixie's
// packages would replace bookworm's), and then
//   1. runs the addon's own binding.gyp through node-gyp (same node-addon-api and Node
//      headers as the real build) with pkg-config pointed at the unpacked freerdp3,
//      freerdp-client3 and winpr3, and compiles wraith_rdp.cc to an object file with
//      -Werror=deprecated-declarations (FreeRDP 3 marks the 2.x names it will drop);
//   2. checks from the dependency file that every FreeRDP/WinPR header came from the
//      unpacked FreeRDP 3, none from the system's FreeRDP 2;
//   3. checks that every C symbol the object needs is exported by trixie's libfreerdp3,
//      libfreerdp-client3 or libwinpr3 (or is Node-API, libc, libstdc++ or OpenSSL).
// It does NOT link or run the addon: trixie's libraries need trixie's glibc. This is a
// compile-and-symbol check, which is what "one source builds against 2.x and 3.x" needs.
//
// Usage: node native/rdp/check-freerdp3.mjs [--json]
//   Exit 0 when it compiled and every symbol resolved; 1 otherwise, naming what failed
//   (a download that could not be fetched names its URL).
// Env: WRAITH_FREERDP3_CACHE (default <repo>/.cache/freerdp3; a fresh clone fills it once,
//      ~1.8 MB of .debs), WRAITH_DEBIAN_MIRROR (default http://deb.debian.org/debian).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const require = createRequire(import.meta.url);
const json = process.argv.includes('--json');

// Debian 13 (trixie) freerdp3. The pool keeps a version's files while a suite lists it; when
// trixie moves on, this pin 404s: take the new version from packages.debian.org/trixie/freerdp3-dev
// and the hashes from `sha256sum` of the new files. amd64 on every host: the check compiles
// with the host compiler, and the headers are the same on every Debian architecture.
const VERSION = '3.15.0+dfsg-2.1';
const ARCH = 'amd64';
const DEBS = {
  'freerdp3-dev': '46487186be92673bd1cb42b98a75a100fe4847b7e5922f37971a8e0981dc166d',
  'libwinpr3-dev': '92c6ebe1c90507ac12f78bcd0c13d2d7344a5003792b55267fe83707a30f3cd0',
  'libfreerdp3-3': 'f3c2f3585356ef2cca7e75ce0774f9d38c78fcdbfd379168c7c488e356ba3bcb',
  'libfreerdp-client3-3': '4fb375c7575e085e5e9adb0e68ff2bdb23e64db0064c038298ae222699182c20',
  'libwinpr3-3': 'd224da3fa53b85c841b8d67c738b8c6e00a0fa92aec41bcbe58e7ba4edac6557',
};
const MIRROR = (process.env.WRAITH_DEBIAN_MIRROR || 'http://deb.debian.org/debian').replace(/\/+$/, '');
const CACHE = path.resolve(process.env.WRAITH_FREERDP3_CACHE || path.join(repo, '.cache', 'freerdp3'));

const result = { ok: false, freerdpVersion: '', debianVersion: VERSION, objectBytes: 0, headersFrom: '', symbolsChecked: 0, unresolved: [], error: '' };

function fail(message) {
  result.error = message;
  if (json) console.log(JSON.stringify(result));
  console.error(`[wraith] FreeRDP 3 build check FAILED: ${message}`);
  process.exit(1);
}
const log = (msg) => (json ? console.error : console.log)(`[wraith] FreeRDP 3 build check: ${msg}`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) fail(`could not run ${cmd}: ${r.error.message}`);
  return r;
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

async function fetchDeb(pkg, hash) {
  const file = `${pkg}_${VERSION}_${ARCH}.deb`;
  const dest = path.join(CACHE, 'debs', file);
  if (existsSync(dest) && sha256(readFileSync(dest)) === hash) return dest;
  const url = `${MIRROR}/pool/main/f/freerdp3/${encodeURIComponent(file)}`;
  let body;
  let why = '';
  for (let attempt = 0; attempt < 3 && !body; attempt++) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      if (res.ok) body = Buffer.from(await res.arrayBuffer());
      else {
        why = `HTTP ${res.status} ${res.statusText}`;
        if (res.status === 404) break; // gone from the pool: retrying will not help
      }
    } catch (e) {
      why = e instanceof Error ? `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}` : String(e);
    }
    if (!body && attempt < 2) await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
  }
  if (!body) {
    const hint = why.startsWith('HTTP 404')
      ? ` — Debian replaced ${VERSION}; update VERSION and the hashes in native/rdp/check-freerdp3.mjs`
      : '';
    fail(`could not fetch ${pkg} (${url}): ${why}${hint}`);
  }
  const got = sha256(body);
  if (got !== hash) fail(`${url} has SHA-256 ${got}, expected ${hash}: refusing to use it`);
  mkdirSync(path.dirname(dest), { recursive: true });
  writeFileSync(`${dest}.${process.pid}.part`, body);
  renameSync(`${dest}.${process.pid}.part`, dest);
  return dest;
}

// ---- 1. fetch and unpack ------------------------------------------------------
const debs = [];
for (const [pkg, hash] of Object.entries(DEBS)) debs.push(await fetchDeb(pkg, hash));
// Per-run scratch space (two checks may run at once); removed however the run ends.
mkdirSync(CACHE, { recursive: true });
const work = mkdtempSync(path.join(CACHE, 'work-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const root = path.join(CACHE, `root-${VERSION}`);
if (!existsSync(path.join(root, '.unpacked'))) {
  const tmpRoot = path.join(work, 'root');
  for (const d of debs) {
    const r = run('dpkg-deb', ['-x', d, tmpRoot]);
    if (r.status !== 0) fail(`dpkg-deb -x ${path.basename(d)} failed: ${r.stderr.trim()}`);
  }
  writeFileSync(path.join(tmpRoot, '.unpacked'), `${VERSION}\n`);
  rmSync(root, { recursive: true, force: true });
  renameSync(tmpRoot, root);
}
const libDirs = readdirSync(path.join(root, 'usr', 'lib'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(root, 'usr', 'lib', e.name, 'pkgconfig', 'freerdp3.pc')))
  .map((e) => path.join(root, 'usr', 'lib', e.name));
const libDir = libDirs[0];
if (!libDir) fail(`no freerdp3.pc in the unpacked ${VERSION} packages under ${root}`);
const pcDir = path.join(libDir, 'pkgconfig');

// ---- 2. configure with the addon's own binding.gyp and compile the object ------
let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js');
} catch {
  fail('node-gyp is not installed (a devDependency): run npm install');
}
cpSync(path.join(here, 'binding.gyp'), path.join(work, 'binding.gyp'));
cpSync(path.join(here, 'src'), path.join(work, 'src'), { recursive: true });

const env = {
  ...process.env,
  // Only the unpacked FreeRDP 3 (and the system's OpenSSL) are visible to pkg-config.
  PKG_CONFIG_PATH: pcDir,
  NODE_PATH: path.join(repo, 'node_modules'),
  CXXFLAGS: `${process.env.CXXFLAGS ?? ''} -Werror=deprecated-declarations`.trim(),
};
const pkgs = ['freerdp3', 'freerdp-client3', 'winpr3'];
const modversion = run('pkg-config', ['--modversion', 'freerdp3'], { env });
if (modversion.status !== 0) fail(`pkg-config does not see the unpacked freerdp3: ${modversion.stderr.trim()}`);
result.freerdpVersion = modversion.stdout.trim();
const haveOpenssl = run('pkg-config', ['--exists', 'openssl'], { env }).status === 0;
const gypArgs = [gyp, 'configure', '--release', `--frdp_pkgs=${[...pkgs, ...(haveOpenssl ? ['openssl'] : [])].join(' ')}`,
  `--have_openssl=${haveOpenssl ? 1 : 0}`];
const nodeDir = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(path.join(nodeDir, 'include', 'node', 'node_api.h'))) gypArgs.push(`--nodedir=${nodeDir}`);
const conf = run(process.execPath, gypArgs, { cwd: work, env });
if (conf.status !== 0) fail(`node-gyp configure failed:\n${conf.stdout}${conf.stderr}`);

const objRel = path.join('Release', 'obj.target', 'wraith_rdp', 'src', 'wraith_rdp.o');
log(`compiling src/wraith_rdp.cc against FreeRDP ${result.freerdpVersion} (Debian ${VERSION})`);
const make = run('make', ['-C', 'build', 'BUILDTYPE=Release', 'V=1', objRel], { cwd: work, env });
const obj = path.join(work, 'build', objRel);
if (make.status !== 0 || !existsSync(obj)) fail(`compiling against FreeRDP ${result.freerdpVersion} failed:\n${make.stdout}${make.stderr}`);
result.objectBytes = readFileSync(obj).length;

// ---- 3. which headers were used ------------------------------------------------
const depDir = path.join(work, 'build', 'Release', '.deps', objRel);
const depFile = [`${depDir}.d`, `${depDir}.d.raw`].find(existsSync);
if (!depFile) fail(`no dependency file for ${objRel}: cannot tell which FreeRDP headers were used`);
const deps = readFileSync(depFile, 'utf8').split(/[\s\\]+/).filter(Boolean).map((p) => path.resolve(path.join(work, 'build'), p));
const frdpHeaders = deps.filter((p) => /\/(freerdp|winpr)\//.test(p));
const foreign = frdpHeaders.filter((p) => !p.startsWith(root + path.sep));
const version = frdpHeaders.find((p) => p.endsWith(`${path.sep}freerdp${path.sep}version.h`));
if (!version) fail('freerdp/version.h is not among the headers the compile used');
if (foreign.length) fail(`FreeRDP headers from outside the unpacked FreeRDP 3 were used: ${foreign.slice(0, 5).join(', ')}`);
result.headersFrom = path.relative(repo, path.dirname(path.dirname(version)));

// ---- 4. every symbol it needs exists in FreeRDP 3 (or the host) -----------------
function definedSymbols(files) {
  const out = new Set();
  for (const f of files) {
    const r = run('nm', ['-D', '--defined-only', '--format=just-symbols', f]);
    if (r.status !== 0) fail(`nm ${f} failed: ${r.stderr.trim()}`);
    for (const s of r.stdout.split('\n')) if (s) out.add(s.replace(/@.*$/, ''));
  }
  return out;
}
const frdpLibs = ['libfreerdp3.so.3', 'libfreerdp-client3.so.3', 'libwinpr3.so.3'].map((l) => path.join(libDir, l));
for (const l of frdpLibs) if (!existsSync(l)) fail(`${path.basename(l)} is missing from the unpacked runtime packages`);
const frdp = definedSymbols(frdpLibs);
const hostLib = (name) => {
  const p = run(process.env.CXX || 'g++', [`-print-file-name=${name}`]).stdout.trim();
  return path.isAbsolute(p) && existsSync(p) ? [p] : [];
};
const sslLibDir = run('pkg-config', ['--variable=libdir', 'libcrypto']).stdout.trim();
const host = definedSymbols([
  ...['libc.so.6', 'libm.so.6', 'libstdc++.so.6', 'libgcc_s.so.1'].flatMap(hostLib),
  ...(sslLibDir && existsSync(path.join(sslLibDir, 'libcrypto.so')) ? [path.join(sslLibDir, 'libcrypto.so')] : []),
]);
const undef = run('nm', ['-u', '--format=just-symbols', obj]);
if (undef.status !== 0) fail(`nm -u ${obj} failed: ${undef.stderr.trim()}`);
const needed = undef.stdout.split('\n').filter((s) => s && !s.startsWith('_')); // C symbols; _Z… is C++, _GLOBAL… the linker's
const fromFrdp = needed.filter((s) => frdp.has(s));
result.unresolved = needed.filter((s) => !frdp.has(s) && !host.has(s) && !/^(napi|node_api)_/.test(s));
result.symbolsChecked = fromFrdp.length;
if (result.unresolved.length) {
  fail(`symbols that neither FreeRDP ${result.freerdpVersion} nor the host exports: ${result.unresolved.join(', ')}`);
}

result.ok = true;
if (json) console.log(JSON.stringify(result));
log(
  `OK: compiled against FreeRDP ${result.freerdpVersion} headers (${result.headersFrom}); all ${fromFrdp.length} FreeRDP/WinPR ` +
    `symbols it uses are exported by trixie's libfreerdp3/libfreerdp-client3/libwinpr3. Compile and symbol check only: ` +
    'not linked or run (those libraries need trixie\'s glibc).',
);
