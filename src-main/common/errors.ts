/**
 * Stable error codes. Every failure that crosses the contract carries one of these,
 * plus a message a person can act on. Codes never change meaning; messages may improve.
 */
export const ERROR_CODES = [
  'EBADARGS',
  'ENOTFOUND',
  'EDENIED',
  'ETIMEOUT',
  'EIO',
  'EAUTH',
  'EHOSTKEY_UNKNOWN',
  'EHOSTKEY_CHANGED',
  /** The server offered an SSH host key a known_hosts import marked @revoked (details: the key, its source). */
  'EHOSTKEY_REVOKED',
  'ECERT_UNKNOWN',
  'ECERT_CHANGED',
  'ESESSIONCLOSED',
  'ELOCKED',
  'EUNAVAILABLE',
  'ECANCELLED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Extra, machine-readable facts about an error (e.g. a host key fingerprint). Never secrets. */
export type ErrorDetails = Record<string, unknown>;

export interface SerializedError {
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

export class WraithError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetails;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'WraithError';
    this.code = code;
    this.details = details;
  }

  toJSON(): SerializedError {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/**
 * Turns anything thrown into a serializable error. Unknown errors become EIO with their
 * message; the stack is never sent across the wire.
 */
export function toSerializedError(err: unknown): SerializedError {
  if (err instanceof WraithError) return err.toJSON();
  if (err instanceof Error) {
    const code = (err as Error & { code?: unknown }).code;
    if (isErrorCode(code)) return { code, message: err.message };
    return { code: 'EIO', message: err.message || 'Unexpected failure' };
  }
  return { code: 'EIO', message: String(err) };
}

/** An error as it came over a wire; a code this build does not know becomes EIO. */
export function fromSerializedError(e: { code: string; message: string; details?: Record<string, unknown> }): WraithError {
  return new WraithError(isErrorCode(e.code) ? e.code : 'EIO', e.message, e.details);
}
