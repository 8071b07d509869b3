/** The lint rules that keep the rooms apart really fire (and stay quiet on allowed imports). */
import { ESLint } from 'eslint';
import { expect, test } from 'vitest';
import { REPO_ROOT } from '../fixtures/wraith-server.js';

const eslint = new ESLint({ cwd: REPO_ROOT });

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

test('the renderer imports only src-main/common and no Node or Electron', async () => {
  expect(await restricted('src-renderer/x.ts', "import { App } from '../src-main/node/app.js';\nexport { App };")).toHaveLength(1);
  expect(await restricted('src-renderer/x.ts', "import { ipcRenderer } from 'electron';\nexport { ipcRenderer };")).toHaveLength(1);
  expect(await restricted('src-renderer/x.ts', "import { readFileSync } from 'node:fs';\nexport { readFileSync };")).toHaveLength(1);
  expect(await restricted('src-renderer/x.ts', "import { methods } from '../src-main/common/contract/index.js';\nexport { methods };")).toEqual([]);
});

test('services never import electron or a host', async () => {
  expect(await restricted('src-main/node/x.ts', "import { app } from 'electron';\nexport { app };")).toHaveLength(1);
  expect(await restricted('src-main/node/x.ts', "import { startServer } from '../server/ws-server.js';\nexport { startServer };")).toHaveLength(1);
  expect(await restricted('src-main/node/x.ts', "import Database from 'better-sqlite3';\nexport { Database };")).toEqual([]);
});

test('the contract imports nothing but zod', async () => {
  expect(await restricted('src-main/common/x.ts', "import { readFileSync } from 'node:fs';\nexport { readFileSync };")).toHaveLength(1);
  expect(await restricted('src-main/common/x.ts', "import { z } from 'zod';\nexport { z };")).toEqual([]);
});
