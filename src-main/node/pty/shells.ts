import { accessSync, constants, statSync } from 'node:fs';
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
  const found: { name: string; path: string }[] = [];
  const add = (name: string, path: string | null) => {
    if (path && isExecutable(path) && !found.some((s) => s.path === path)) found.push({ name, path });
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
  return found.map((s) => ({ ...s, isDefault: s.path === defaultPath }));
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
