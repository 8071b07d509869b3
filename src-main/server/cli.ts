import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ContractClient } from '../common/client.js';
import { events, methods } from '../common/contract/index.js';
import { describeContract } from '../common/contract/describe.js';
import { WraithError, toSerializedError } from '../common/errors.js';
import { App } from '../node/app.js';
import { defaultDataDir, packageRoot } from '../node/paths.js';
import { readRuntimeFile, removeRuntimeFile, writeRuntimeFile } from './runtime-file.js';
import { connectWebSocket } from './ws-client.js';
import { startServer } from './ws-server.js';
import { reachNotes } from './reach.js';
import { parseOrigin } from './origin.js';

const USAGE = `Usage:
  wraith serve [--port N] [--host 127.0.0.1] [--origin URL]... [--data-dir D]
  wraith methods
  wraith call METHOD [JSON|-]        (- reads the JSON from stdin)
  wraith events [--filter PREFIX]
  wraith mcp

call/events find the host via --url/--token, WRAITH_URL/WRAITH_TOKEN, or the runtime file
in the data dir (--data-dir, WRAITH_DATA_DIR, else ~/.config/wraith).`;

/** Bytes print as {"base64": "..."}: JSON has no bytes. */
function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => (v instanceof Uint8Array ? { base64: Buffer.from(v).toString('base64') } : v),
    indent,
  );
}

function fail(err: unknown): never {
  process.stderr.write(toJson(toSerializedError(err)) + '\n');
  process.exit(1);
}

async function connect(values: { url?: string; token?: string; 'data-dir'?: string }): Promise<ContractClient> {
  const url = values.url ?? process.env.WRAITH_URL;
  const token = values.token ?? process.env.WRAITH_TOKEN;
  if (url && token) return connectWebSocket(url, token);
  const runtime = readRuntimeFile(defaultDataDir(values['data-dir']));
  if (!runtime) {
    throw new WraithError(
      'EUNAVAILABLE',
      'No running Wraith host found. Start one with `wraith serve`, or pass --url and --token (or WRAITH_URL/WRAITH_TOKEN).',
    );
  }
  return connectWebSocket(runtime.url, runtime.token);
}

async function serve(values: { port?: string; host?: string; origin?: string[]; 'data-dir'?: string }): Promise<void> {
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new WraithError('EBADARGS', `--port: "${values.port}" is not a port number.`);
  const origins = (values.origin ?? []).map(parseOrigin);
  const host = values.host ?? '127.0.0.1';
  const dataDir = defaultDataDir(values['data-dir']);
  // One host per data folder: a second would share its database and vault, and its runtime file
  // would hide the first from `wraith call` (and take it along when it stops).
  const running = readRuntimeFile(dataDir);
  if (running && running.pid !== process.pid) {
    throw new WraithError(
      'EUNAVAILABLE',
      `A Wraith host is already running on the data folder ${dataDir} (pid ${running.pid}, ${running.url}). Stop it first, or start this one with another --data-dir.`,
    );
  }
  const app = new App({ dataDir, host: 'server' });
  const server = await startServer({ app, host, port, origins, staticDir: join(packageRoot(), 'dist', 'renderer') });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    removeRuntimeFile(dataDir);
    await server.close();
    await app.dispose();
    process.exit(0);
  };
  // Before the line that says it is up: whoever reads it may stop it at once, and a SIGTERM that
  // came before a handler would end the process without removing its runtime file.
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  writeRuntimeFile(dataDir, { url: server.url, token: server.token, pid: process.pid });
  process.stdout.write(`Wraith listening on ${server.openUrl}\n`);
  const reach = reachNotes(host, server.port, server.token);
  for (const line of reach.out) process.stdout.write(line + '\n');
  for (const line of reach.warnings) process.stderr.write(line + '\n');
  const vault = app.vault.status();
  if (vault.warning) process.stderr.write(`Warning: ${vault.warning}\n`);
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  filter: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The options after the command; an unknown or incomplete one is the caller's mistake (EBADARGS), not a failure. */
function parseCommandLine(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    throw new WraithError('EBADARGS', `${err instanceof Error ? err.message : String(err)} wraith --help lists the options.`);
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseCommandLine(rest);
  if (values.help || command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  switch (command) {
    case 'serve':
      return serve(values);
    case 'methods': {
      const described = describeContract(methods, events, () => true);
      process.stdout.write(toJson(described.methods.map(({ implemented: _i, ...m }) => m), 2) + '\n');
      return;
    }
    case 'call': {
      const [method, json] = positionals;
      if (!method) throw new WraithError('EBADARGS', 'Usage: wraith call METHOD [JSON]');
      let params: unknown;
      const text = json === '-' ? readFileSync(0, 'utf8') : json;
      if (text !== undefined && text.trim() !== '') {
        try {
          params = JSON.parse(text);
        } catch (err) {
          throw new WraithError('EBADARGS', `The argument is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      const client = await connect(values);
      try {
        const result = await client.callRaw(method, params);
        process.stdout.write(toJson(result, 2) + '\n');
      } finally {
        client.close();
      }
      return;
    }
    case 'events': {
      const client = await connect(values);
      client.onAny((name, payload) => process.stdout.write(toJson({ name, payload }) + '\n'));
      client.onClose((reason) => fail(new WraithError('ESESSIONCLOSED', `The host closed the connection: ${reason}`)));
      client.subscribe([values.filter ?? '']);
      return new Promise(() => {}); // until interrupted
    }
    case 'mcp':
      throw new WraithError('EUNAVAILABLE', 'wraith mcp is not built yet: the MCP bridge arrives with the agents work.');
    default:
      throw new WraithError('EBADARGS', `Unknown command "${command}". The commands are serve, methods, call, events and mcp: wraith --help says more.`);
  }
}

// A closed pipe (`wraith methods | head`) is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv.slice(2)).catch(fail);
