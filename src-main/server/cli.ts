import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ContractClient } from '../common/client.js';
import { events, methods } from '../common/contract/index.js';
import { describeContract } from '../common/contract/describe.js';
import { WraithError, toSerializedError } from '../common/errors.js';
import { App } from '../node/app.js';
import { defaultDataDir, packageRoot } from '../node/paths.js';
import { resolveLocalPaths } from './cli-local-paths.js';
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

call/events find the host via --url with --token (or the URL \`wraith serve\` printed, token
included), WRAITH_URL/WRAITH_TOKEN, or the runtime file in the data dir (--data-dir,
WRAITH_DATA_DIR, else ~/.config/wraith).

JSON has no bytes: bytes print as {"base64": "..."}, and an object that is exactly
{"base64": "..."} in the input is sent as those bytes (e.g. sftp.write's data).
The input must be UTF-8 text.`;

/**
 * Bytes print as {"base64": "..."}: JSON has no bytes. The replacer looks at the holder's own
 * value: the one it is given has been through toJSON already, which turns a Buffer (what
 * msgpack decodes bytes as) into {"type":"Buffer","data":[...]}.
 */
function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    function (this: unknown, key: string, replaced: unknown) {
      const own: unknown = (this as Record<string, unknown>)[key];
      return own instanceof Uint8Array ? { base64: Buffer.from(own.buffer, own.byteOffset, own.byteLength).toString('base64') } : replaced;
    },
    indent,
  );
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A JSON.parse reviver: an object that is exactly {"base64": string} is bytes, as toJson prints them. */
function bytesFromBase64(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'base64') return value;
  const encoded: unknown = (value as { base64: unknown }).base64;
  if (typeof encoded !== 'string') return value;
  if (!BASE64.test(encoded)) {
    throw new WraithError('EBADARGS', 'A {"base64": ...} value in the input is not base64: use A-Z, a-z, 0-9, + and / with = padding, as `base64` prints.');
  }
  const bytes = Buffer.from(encoded, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const NOT_UTF8 = 'The input is not UTF-8 text: convert it to UTF-8 first (e.g. with iconv), or send bytes as {"base64": "..."}.';

/** Stdin as text; bytes that are not UTF-8 are refused, never written as U+FFFD. */
function readStdinText(): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(0));
  } catch (err) {
    if (err instanceof TypeError) throw new WraithError('EBADARGS', NOT_UTF8);
    throw err;
  }
}

/**
 * Node has decoded the arguments already, with U+FFFD for bytes that are not UTF-8: that
 * character is all that is left to tell them by, so it is refused (a JSON escape sends it).
 */
function checkArgumentText(text: string | undefined): string | undefined {
  if (text?.includes('\uFFFD')) throw new WraithError('EBADARGS', `${NOT_UTF8} (A U+FFFD character counts as not UTF-8 in an argument: write it as \\ufffd if you mean it.)`);
  return text;
}

function fail(err: unknown): never {
  process.stderr.write(toJson(toSerializedError(err)) + '\n');
  process.exit(1);
}

const TOKEN_WHERE = 'the token is in the URL `wraith serve` printed';

/**
 * The host named by --url/--token, else by WRAITH_URL/WRAITH_TOKEN; undefined when neither names
 * one. A pair comes from one place, and half of one is refused: falling back to the local host
 * would run on this machine what was meant for another. The URL `wraith serve` printed carries
 * the token; it is never repeated in a message.
 */
function explicitHost(values: { url?: string; token?: string }, env: NodeJS.ProcessEnv): { url: string; token: string } | undefined {
  const fromFlags = values.url !== undefined || values.token !== undefined;
  const [urlName, tokenName] = fromFlags ? ['--url', '--token'] : ['WRAITH_URL', 'WRAITH_TOKEN'];
  const rawUrl = fromFlags ? values.url : env.WRAITH_URL || undefined;
  const rawToken = fromFlags ? values.token : env.WRAITH_TOKEN || undefined;
  if (rawUrl === undefined && rawToken === undefined) return undefined;
  if (rawUrl === undefined) throw new WraithError('EBADARGS', `${tokenName} needs ${urlName}: give the host's address too (${TOKEN_WHERE}, or pass that whole URL as ${urlName}).`);
  let parsed: URL | undefined;
  try {
    parsed = new URL(rawUrl);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    const shown = rawUrl.replace(/([?&]token=)[^&#]*/g, '$1…');
    throw new WraithError('EBADARGS', `${urlName}: "${shown}" is not an http:// or https:// address. Give it as \`wraith serve\` printed it, e.g. http://127.0.0.1:47311/?token=…`);
  }
  const urlToken = parsed.searchParams.get('token') ?? undefined;
  if (urlToken !== undefined && rawToken !== undefined && urlToken !== rawToken) {
    throw new WraithError('EBADARGS', `The token in ${urlName} and ${tokenName} differ: give one of them.`);
  }
  const token = rawToken ?? urlToken;
  if (!token) throw new WraithError('EBADARGS', `${urlName} needs ${tokenName} (${TOKEN_WHERE}).`);
  return { url: parsed.origin + parsed.pathname, token };
}

async function connect(values: { url?: string; token?: string; 'data-dir'?: string }): Promise<ContractClient> {
  const host = explicitHost(values, process.env);
  if (host) return connectWebSocket(host.url, host.token);
  const runtime = readRuntimeFile(defaultDataDir(values['data-dir']));
  if (!runtime) {
    throw new WraithError(
      'EUNAVAILABLE',
      'No running Wraith host found. Start one with `wraith serve`, or pass --url and --token (or WRAITH_URL/WRAITH_TOKEN).',
    );
  }
  return connectWebSocket(runtime.url, runtime.token);
}

/**
 * WRAITH_PANEL_GRACE_MS, for tests: how long a local shell panel's shell waits for its window to
 * claim it again (PANEL_CLAIM_GRACE_MS when unset), so a test of a window closed for good need not
 * wait the whole default.
 */
function panelGraceFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.WRAITH_PANEL_GRACE_MS;
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 3_600_000) {
    throw new WraithError('EBADARGS', `WRAITH_PANEL_GRACE_MS must be a whole number of milliseconds from 0 to 3600000; got "${raw}".`);
  }
  return ms;
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
  const app = new App({ dataDir, host: 'server', terminal: { panelGraceMs: panelGraceFromEnv(process.env) } });
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

/** parseArgs' message as one sentence: its own run on ("…after '--', as in '-- \"--x\""), or lack a period. */
function optionMistake(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown }).code;
  const unknown = /^Unknown option '([^']*)'/.exec(message);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) return `Unknown option '${unknown[1]}'.`;
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message);
  if (missing) return `Option '${missing[1]}' needs a value.`;
  const ambiguous = /^Option '(?:-\w, )?(--[\w-]+)' argument is ambiguous/.exec(message);
  if (ambiguous) return `Option '${ambiguous[1]}' needs a value (one that starts with '-' goes as ${ambiguous[1]}=-VALUE).`;
  const oneLine = message.replace(/\s*\n\s*/g, ' ').trim();
  return /[.!?]$/.test(oneLine) ? oneLine : `${oneLine}.`;
}

/** The options after the command; an unknown or incomplete one is the caller's mistake (EBADARGS), not a failure. */
function parseCommandLine(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    throw new WraithError('EBADARGS', `${optionMistake(err)} wraith --help lists the options.`);
  }
}

/** What each command takes besides options; more is refused, never dropped. */
const POSITIONALS: Record<string, { max: number; takes: string }> = {
  serve: { max: 0, takes: 'no arguments besides options' },
  methods: { max: 0, takes: 'no arguments besides options' },
  call: { max: 2, takes: 'METHOD and one JSON argument (quote the JSON so the shell passes it as one)' },
  events: { max: 0, takes: 'no arguments besides options' },
};

function refuseExtraArguments(command: string, positionals: string[]): void {
  const allowed = POSITIONALS[command];
  if (!allowed || positionals.length <= allowed.max) return;
  const extra = positionals.slice(allowed.max).map((a) => `"${a}"`).join(', ');
  throw new WraithError('EBADARGS', `Unexpected argument ${extra}: wraith ${command} takes ${allowed.takes}.`);
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseCommandLine(rest);
  if (values.help || command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  refuseExtraArguments(command, positionals);
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
      const text = json === '-' ? readStdinText() : checkArgumentText(json);
      if (text !== undefined && text.trim() !== '') {
        try {
          params = JSON.parse(text, bytesFromBase64);
        } catch (err) {
          if (err instanceof WraithError) throw err;
          throw new WraithError('EBADARGS', `The argument is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      const client = await connect(values);
      try {
        const result = await client.callRaw(method, resolveLocalPaths(method, params, process.cwd()));
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
    // In DESIGN, not built: left out of --help until it is.
    case 'mcp':
      throw new WraithError('EUNAVAILABLE', 'wraith mcp is not built yet: the MCP bridge arrives with the agents work.');
    default:
      throw new WraithError('EBADARGS', `Unknown command "${command}". The commands are serve, methods, call and events: wraith --help says more.`);
  }
}

// A closed pipe (`wraith methods | head`) is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv.slice(2)).catch(fail);
