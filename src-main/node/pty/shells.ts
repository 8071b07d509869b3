import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';

export interface ShellInfo {
  name: string;
  path: string;
  isDefault: boolean;
}

function isExecutable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (process.platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path with every link resolved (the path itself if that fails). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** First match of `name` on PATH, or null. */
export function whichSync(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = join(dir, name + ext);
      if (isExecutable(p)) return p;
    }
  }
  return null;
}

/**
 * Local shells found on this machine: bash, zsh, fish, sh and $SHELL on Unix; PowerShell
 * (pwsh and Windows PowerShell), cmd and Git Bash on Windows. $SHELL (or PowerShell) is the default.
 */
export function detectShells(env: NodeJS.ProcessEnv = process.env): ShellInfo[] {
  const found: { name: string; path: string; same: string }[] = [];
  // One program under one name is one shell, however it is reached: on a merged-/usr system
  // /bin/bash ($SHELL) and /usr/bin/bash (PATH) are one file, and the first keeps its place. The
  // name it is started by counts too: sh linked to bash runs as a POSIX sh, another shell.
  const add = (name: string, path: string | null) => {
    if (!path || !isExecutable(path)) return;
    const same = `${realPath(path)}\0${basename(path)}`;
    if (!found.some((s) => s.same === same)) found.push({ name, path, same });
  };
  let defaultPath: string | null = null;
  if (process.platform === 'win32') {
    const sysRoot = env.SystemRoot ?? 'C:\\Windows';
    add('PowerShell 7', whichSync('pwsh', env));
    add('Windows PowerShell', join(sysRoot, 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe'));
    add('Command Prompt', env.ComSpec ?? join(sysRoot, 'System32', 'cmd.exe'));
    for (const p of [
      join(env.ProgramFiles ?? 'C:\\Program Files', 'Git', 'bin', 'bash.exe'),
      join(env['ProgramFiles(x86)'] ?? 'C:\\Program Files (x86)', 'Git', 'bin', 'bash.exe'),
      env.LOCALAPPDATA ? join(env.LOCALAPPDATA, 'Programs', 'Git', 'bin', 'bash.exe') : '',
    ]) {
      if (p) add('Git Bash', p);
    }
    defaultPath = found[0]?.path ?? null;
  } else {
    if (env.SHELL && isAbsolute(env.SHELL)) {
      add(basename(env.SHELL), env.SHELL);
      defaultPath = isExecutable(env.SHELL) ? env.SHELL : null;
    }
    for (const name of ['bash', 'zsh', 'fish', 'sh']) {
      add(name, whichSync(name, env) ?? [`/bin/${name}`, `/usr/bin/${name}`, `/usr/local/bin/${name}`].find(isExecutable) ?? null);
    }
    defaultPath ??= found[0]?.path ?? null;
  }
  return found.map(({ name, path }) => ({ name, path, isDefault: path === defaultPath }));
}

/**
 * Turns what a caller passed as `shell` (a path, or a name from pty.shells) into an executable
 * path, or null.
 */
export function resolveShell(shell: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (isAbsolute(shell)) return isExecutable(shell) ? shell : null;
  const known = detectShells(env).find((s) => s.name === shell || basename(s.path) === shell);
  return known?.path ?? whichSync(shell, env);
}
