// Issue 4: the addon builds against FreeRDP 2.x and 3.x from one source. This machine has
// only FreeRDP 2 (Debian 12), so native/rdp/check-freerdp3.mjs fetches FreeRDP 3's -dev and
// library .debs from Debian 13 into .cache/freerdp3 (once per clone), compiles wraith_rdp.cc
// against them with the addon's binding.gyp, and checks every symbol it uses exists in
// FreeRDP 3. A failed download is a failure naming what could not be fetched, never a skip.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

interface CheckResult {
  ok: boolean;
  freerdpVersion: string;
  headersFrom: string;
  objectBytes: number;
  symbolsChecked: number;
  unresolved: string[];
  error: string;
}

function runCheck(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = fileURLToPath(new URL('../../native/rdp/check-freerdp3.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [script, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    p.once('error', reject);
    p.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('wraith_rdp.cc compiles against FreeRDP 3 and uses only symbols FreeRDP 3 exports', async () => {
  const { code, stdout, stderr } = await runCheck();
  // On failure the script's own message says what went wrong (e.g. which .deb could not be fetched).
  const failure = /FAILED: [\s\S]*/.exec(stderr)?.[0] ?? stderr.trim();
  expect(code, failure).toBe(0);
  const line = stdout.trim().split('\n').pop() ?? '';
  const r = JSON.parse(line) as CheckResult;
  expect(r.ok).toBe(true);
  expect(r.freerdpVersion).toMatch(/^3\.\d+\.\d+/);
  expect(r.headersFrom).toMatch(/include[/\\]freerdp3$/);
  expect(r.objectBytes).toBeGreaterThan(0);
  expect(r.unresolved).toEqual([]);
  // connect, settings, GDI, input, channels, WLog, synch: far more than a handful of calls.
  expect(r.symbolsChecked).toBeGreaterThan(30);
}, 240_000);
