import type { ContractClient } from '../../src-main/common/client.js';
import { type EventName, type EventPayload, events as contractEvents } from '../../src-main/common/contract/index.js';
import type { MessagesRequestBody, RecordedRequest } from '../fixtures/fake-anthropic.js';

function parsePayload<E extends EventName>(name: E, payload: unknown): EventPayload<E> {
  // Checked: parsed by the event's own schema; TypeScript cannot correlate the generic index.
  return contractEvents[name].payload.parse(payload) as EventPayload<E>;
}

/** Records every ai.* event a client receives and lets a test wait for one. */
export class EventLog {
  readonly events: { name: string; payload: unknown }[] = [];
  private waiters: { match: (name: string, payload: unknown) => boolean; resolve: (p: unknown) => void }[] = [];

  constructor(client: ContractClient) {
    client.onAny((name, payload) => {
      this.events.push({ name, payload });
      for (const w of [...this.waiters]) {
        if (w.match(name, payload)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(payload);
        }
      }
    });
  }

  of<E extends EventName>(name: E): EventPayload<E>[] {
    return this.events.filter((e) => e.name === name).map((e) => parsePayload(name, e.payload));
  }

  wait<E extends EventName>(name: E, pred: (p: EventPayload<E>) => boolean = () => true, timeoutMs = 15_000): Promise<EventPayload<E>> {
    const existing = this.of(name).find(pred);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${name}`)), timeoutMs);
      this.waiters.push({
        match: (n, p) => n === name && pred(parsePayload(name, p)),
        resolve: (p) => {
          clearTimeout(t);
          resolve(parsePayload(name, p));
        },
      });
    });
  }

  clear(): void {
    this.events.length = 0;
  }
}

/** Every tool_result block in a request, as {tool_use_id, text, is_error, images}. */
export function toolResults(body: MessagesRequestBody): { id: string; text: string; isError: boolean; images: { media_type: string; data: string }[] }[] {
  const out: { id: string; text: string; isError: boolean; images: { media_type: string; data: string }[] }[] = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (typeof b !== 'object' || b === null || !('type' in b) || b.type !== 'tool_result') continue;
      const id = 'tool_use_id' in b && typeof b.tool_use_id === 'string' ? b.tool_use_id : '';
      const isError = 'is_error' in b && b.is_error === true;
      const parts: unknown[] = 'content' in b && Array.isArray(b.content) ? b.content : [];
      let text = '';
      const images: { media_type: string; data: string }[] = [];
      for (const c of parts) {
        if (typeof c !== 'object' || c === null || !('type' in c)) continue;
        if (c.type === 'text' && 'text' in c && typeof c.text === 'string') text += c.text;
        if (c.type === 'image' && 'source' in c && typeof c.source === 'object' && c.source !== null && 'data' in c.source && 'media_type' in c.source) {
          images.push({ media_type: String(c.source.media_type), data: String(c.source.data) });
        }
      }
      out.push({ id, text, isError, images });
    }
  }
  return out;
}

export function lastToolResult(req: RecordedRequest | undefined): { id: string; text: string; isError: boolean; images: { media_type: string; data: string }[] } | undefined {
  return req ? toolResults(req.body).at(-1) : undefined;
}

export function toolNames(req: RecordedRequest | undefined): string[] {
  return (req?.body.tools ?? []).map((t) => t.name);
}
