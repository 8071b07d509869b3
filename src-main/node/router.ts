import { z } from 'zod';
import {
  type EventName,
  type EventPayload,
  type MethodName,
  type Output,
  type ParsedInput,
  events,
  isMethodName,
  methods,
} from '../common/contract/index.js';
import { parseParams } from '../common/contract/issue-messages.js';
import { WraithError } from '../common/errors.js';

/** Who is calling: the UI, the CLI, the XO, an MCP agent. Audit and policy read it. */
export interface CallContext {
  readonly clientId: string;
  readonly origin: 'ui' | 'cli' | 'ai' | 'mcp' | 'test';
  readonly signal?: AbortSignal;
  /**
   * Aborted when the caller's connection closes (a window closed or reloaded, `wraith call` done).
   * Unlike `signal`, which ends with the call, it lasts as long as the caller: what a call leaves
   * in the caller's keeping (a window's local shell panel) learns from it when the caller is gone.
   */
  readonly connectionSignal?: AbortSignal;
  /**
   * Aborted when the caller has gone for good (a page closed or reloaded), not when its link
   * dropped and may come back: what only it could go on with (the bytes of an upload it streams)
   * ends then, instead of waiting for it.
   */
  readonly left?: AbortSignal;
}

export type Handler<M extends MethodName> = (
  input: ParsedInput<M>,
  ctx: CallContext,
) => Output<M> | Promise<Output<M>>;

type AnyHandler = (input: unknown, ctx: CallContext) => unknown;

/** Formats zod issues as one line a person can act on: "port: Port is 1–65535; host: …". */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}

/**
 * The one place calls are dispatched. Services register handlers for contract methods; every
 * transport calls `call()`, which parses the input (EBADARGS on mismatch), runs the handler,
 * and checks the output against the contract.
 */
export class Router {
  private readonly handlers = new Map<string, AnyHandler>();

  handle<M extends MethodName>(name: M, handler: Handler<M>): void {
    if (this.handlers.has(name)) throw new Error(`Handler for ${name} registered twice`);
    this.handlers.set(name, handler as AnyHandler);
  }

  isImplemented(name: string): boolean {
    return this.handlers.has(name);
  }

  async call(name: string, params: unknown, ctx: CallContext): Promise<unknown> {
    if (typeof name !== 'string' || !isMethodName(name)) {
      throw new WraithError('ENOTFOUND', `Unknown method "${String(name).slice(0, 200)}". Run \`wraith methods\` for the list.`);
    }
    const handler = this.handlers.get(name);
    if (!handler) {
      throw new WraithError('EUNAVAILABLE', `${name} is not available on this host.`);
    }
    const def = methods[name];
    // EBADARGS worded for people: a sentence per problem, and each field's issue for the dialogs.
    const input = parseParams(name, def.input, params);
    const result = await handler(input, ctx);
    const checked = def.output.safeParse(result);
    if (!checked.success) {
      // A service broke the contract: that is our bug, never the caller's.
      throw new WraithError('EIO', `${name} produced a result outside its contract: ${describeIssues(checked.error)}`);
    }
    return checked.data;
  }
}

type EventListener = (name: EventName, payload: unknown) => void;

/**
 * Pushes from services to every connected client. Payloads are checked against the contract
 * when WRAITH_STRICT_EVENTS is set (tests), and trusted otherwise: terminal data is a hot path.
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private readonly strict = process.env.WRAITH_STRICT_EVENTS === '1';

  emit<E extends EventName>(name: E, payload: EventPayload<E>): void {
    if (this.strict) {
      const r = events[name].payload.safeParse(payload);
      if (!r.success) throw new Error(`Event ${name} outside its contract: ${describeIssues(r.error)}`);
    }
    for (const l of this.listeners) l(name, payload);
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
