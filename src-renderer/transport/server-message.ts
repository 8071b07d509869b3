import { isErrorCode } from '@common/errors.js';
import type { ServerMessage } from '@common/protocol.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks the shape of a decoded frame before the ContractClient sees it. Payloads stay
 * `unknown` here; the contract types them and the host validated them on the way out.
 */
export function toServerMessage(raw: unknown): ServerMessage | null {
  if (!isRecord(raw)) return null;
  switch (raw.t) {
    case 'result':
      return typeof raw.id === 'number' ? { t: 'result', id: raw.id, result: raw.result } : null;
    case 'event':
      return typeof raw.name === 'string' ? { t: 'event', name: raw.name, payload: raw.payload } : null;
    case 'error': {
      const e = raw.error;
      if (!isRecord(e) || typeof e.message !== 'string') return null;
      return {
        t: 'error',
        id: typeof raw.id === 'number' ? raw.id : null,
        error: {
          // A code this build does not know yet still reaches the caller, as EIO with its message.
          code: isErrorCode(e.code) ? e.code : 'EIO',
          message: e.message,
          ...(isRecord(e.details) ? { details: e.details } : {}),
        },
      };
    }
    default:
      return null;
  }
}
