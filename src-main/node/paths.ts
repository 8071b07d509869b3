import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root (where package.json, migrations/ and dist/ live), found by walking up
 * from this file: the same code runs from src-main (tests, tsx) and from dist/main (built).
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const parsed: unknown = JSON.parse(readFileSync(pkg, 'utf8'));
        if (typeof parsed === 'object' && parsed !== null && (parsed as { name?: unknown }).name === 'wraith') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Cannot find the Wraith package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function packageVersion(): string {
  const parsed = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof parsed.version === 'string' ? parsed.version : '0.0.0';
}

/** Data dir: explicit > WRAITH_DATA_DIR > $XDG_CONFIG_HOME/wraith > ~/.config/wraith. (Electron passes userData.) */
export function defaultDataDir(explicit?: string): string {
  if (explicit) return resolve(explicit);
  if (process.env.WRAITH_DATA_DIR) return resolve(process.env.WRAITH_DATA_DIR);
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(xdg, 'wraith');
}

/** "~" and "~/…" as ssh takes them (a key file, ssh_config's IdentityFile). */
export function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path;
}
