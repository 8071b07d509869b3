import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** Where a running host says how to reach it, so `wraith call/events/mcp` find it without flags. */
const RuntimeInfo = z.object({ url: z.string(), token: z.string(), pid: z.number().int() });
export type RuntimeInfo = z.infer<typeof RuntimeInfo>;

export const runtimeFilePath = (dataDir: string) => join(dataDir, 'runtime.json');

export function writeRuntimeFile(dataDir: string, info: RuntimeInfo): void {
  writeFileSync(runtimeFilePath(dataDir), JSON.stringify(info), { mode: 0o600 });
}

export function readRuntimeFile(dataDir: string): RuntimeInfo | null {
  const path = runtimeFilePath(dataDir);
  if (!existsSync(path)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null; // cut short (a crash while writing it) or not ours: no host to be found through it
  }
  const parsed = RuntimeInfo.safeParse(json);
  if (!parsed.success) return null;
  try {
    process.kill(parsed.data.pid, 0); // is that host still alive?
  } catch {
    return null;
  }
  return parsed.data;
}

export function removeRuntimeFile(dataDir: string, pid = process.pid): void {
  const path = runtimeFilePath(dataDir);
  try {
    const current = RuntimeInfo.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (current.success && current.data.pid === pid) rmSync(path);
  } catch {
    // already gone
  }
}
