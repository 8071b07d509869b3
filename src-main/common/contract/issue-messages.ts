import { z } from 'zod';

/**
 * zod's own messages are written for programmers ("Invalid input: expected number, received NaN",
 * "Too small: expected number to be >=0"), and the dialogs show the host's issue messages under
 * their fields as they come. This error map, passed to every contract parse by the router, words
 * the common cases for a person instead. A schema's own message (e.g. "Give the connection a
 * name") still wins: zod asks this map only when the schema has none.
 */
export const readableIssue: z.core.$ZodErrorMap = (iss) => {
  const schema = iss.schema ?? iss.inst;
  if (schema instanceof z.ZodNumber) return numberMessage(schema);
  if (iss.code === 'too_small' && iss.origin === 'string') {
    return Number(iss.minimum) <= 1 ? 'Cannot be empty.' : `At least ${String(iss.minimum)} characters.`;
  }
  if (iss.code === 'too_big' && iss.origin === 'string') return `At most ${String(iss.maximum)} characters.`;
  if (iss.code === 'too_big' && iss.origin === 'array') return `At most ${String(iss.maximum)} items.`;
  return undefined; // zod's own message
};

/**
 * One message for every way a number field can be wrong (not a number, blank, a fraction where
 * a whole number belongs, out of range): the range is what a person needs in each case.
 */
function numberMessage(schema: z.ZodNumber): string {
  const what = schema.isInt ? 'a whole number' : 'a number';
  const min = finite(schema.minValue);
  const max = finite(schema.maxValue);
  if (min !== null && max !== null) return `Must be ${what} from ${min} to ${max}.`;
  if (min !== null) return `Must be ${what} of at least ${min}.`;
  if (max !== null) return `Must be ${what} of at most ${max}.`;
  return `Must be ${what}.`;
}

/** A bound a person set (int() alone adds the safe-integer limits, which say nothing to anyone). */
function finite(bound: number | null): number | null {
  return bound === null || !Number.isFinite(bound) || Math.abs(bound) >= Number.MAX_SAFE_INTEGER ? null : bound;
}
