import { z } from 'zod';
import { WraithError } from '../errors.js';

/**
 * Bad params, in words a person can act on. zod's own messages are written for programmers
 * ("Invalid input: expected string, received undefined"), and they reached people as they came:
 * under a dialog's fields, on the CLI's stderr, to the XO. `parseParams` parses a method's params
 * and words each problem twice, from zod's issue (its code, the schema that raised it, the input):
 *
 * - `message`, for under its field, which already names it: "Must be a whole number from 1 to 65535."
 * - a sentence that names the field, for the error's message: "timeoutMs must be a whole number of
 *   milliseconds from 1 to 3600000; got -5." / "command is required (text)." / "recursiv is not a
 *   field of sftp.remove; did you mean recursive?"
 *
 * A schema's own message (e.g. "Give the connection a name") still wins: zod asks for words only
 * when the schema has none, and the sentence is then "name: Give the connection a name".
 *
 * What a caller sent is never repeated, except a number in a number field ("got -5"): a secret put
 * in the wrong field (a password where a number goes) must not come back in an error.
 */

/** One problem with a method's params: EBADARGS carries a list of them in `details.issues`. */
export interface ParamIssue {
  /** The field: ["port"], ["patch", "username"], ["credentials", "0", "secret"]; [] for the params as a whole. */
  path: string[];
  /**
   * zod's issue code, what kind of problem it is: invalid_type (missing or of the wrong type),
   * too_small, too_big, invalid_value (not one of the choices), unrecognized_keys, invalid_union,
   * invalid_format, custom (a rule of the method's own).
   */
  code: string;
  /** For under the field in a form, which names the field itself. */
  message: string;
  /** unrecognized_keys: the fields the method does not have. */
  keys?: string[];
}

/** The most problems the message names one by one, and the most `details.issues` lists. */
const MESSAGE_ISSUES = 5;
const DETAIL_ISSUES = 20;

/**
 * The params of `method` as its schema parses them, or EBADARGS: a message of one sentence per
 * problem (the first five), and `details.issues` (ParamIssue[]).
 */
export function parseParams<S extends z.ZodType>(method: string, schema: S, params: unknown): z.output<S> {
  // zod asks the error map for a message per issue, with the schema and input that raised it;
  // only a string comes back out. The map keeps its words here and answers with their index.
  const worded: Worded[] = [];
  const wordedOf = (message: string): Worded | undefined => (message.startsWith(WORDED) ? worded[Number(message.slice(WORDED.length))] : undefined);
  const parsed = schema.safeParse(params, {
    error: (iss) => {
      const w = wordIssue(iss, method, (message) => wordedOf(message)?.message ?? message);
      if (!w) return undefined; // zod's own words: a kind of problem the contract does not have
      worded.push(w);
      return `${WORDED}${worded.length - 1}`;
    },
  });
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const w = wordedOf(issue.message);
    const detail: ParamIssue = { path: issue.path.map(String), code: issue.code, message: w?.message ?? issue.message };
    if (issue.code === 'unrecognized_keys') detail.keys = issue.keys;
    return { sentence: w?.sentence ?? ownSentence(issue.path, issue.message), detail };
  });
  // A misspelt field first: it is often why another is missing ("comand" → command is required).
  problems.sort((a, b) => Number(b.detail.code === 'unrecognized_keys') - Number(a.detail.code === 'unrecognized_keys'));
  // The message names a field once, with its first problem (as a form shows it); details keep all.
  const named: typeof problems = [];
  const fields = new Set<string>();
  for (const p of problems) {
    const field = p.detail.path.join('\0');
    if (p.detail.code !== 'unrecognized_keys') {
      if (fields.has(field)) continue;
      fields.add(field);
    }
    named.push(p);
  }
  const more = named.length - MESSAGE_ISSUES;
  const message = named
    .slice(0, MESSAGE_ISSUES)
    .map((p) => p.sentence)
    .concat(more > 0 ? [`And ${more} more ${more === 1 ? 'problem' : 'problems'}.`] : [])
    .join(' ');
  throw new WraithError('EBADARGS', message, { issues: problems.slice(0, DETAIL_ISSUES).map((p) => p.detail) });
}

/** Marks a message as an index into the words parseParams kept (never shown: it is replaced). */
const WORDED = '\u{F8FF}worded:';

interface Worded {
  message: string;
  sentence: string;
}

/** A schema's own message, after the field it is about. */
function ownSentence(path: readonly PropertyKey[], message: string): string {
  return path.length > 0 ? `${fieldName(path)}: ${withStop(message)}` : withStop(message);
}

function withStop(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** ["credentials", 0, "secret"] → "credentials[0].secret". */
function fieldName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, seg) => (typeof seg === 'number' ? `${name}[${seg}]` : name ? `${name}.${String(seg)}` : String(seg)), '');
}

/** zod codes that say a value is of another kind altogether (a number where text goes). */
const WRONG_KIND = new Set(['invalid_type', 'invalid_value']);

/** `resolve`: the words of a message zod finalised earlier (those of a union's options). */
function wordIssue(iss: z.core.$ZodRawIssue, method: string, resolve: (message: string) => string): Worded | undefined {
  const path = iss.path ?? [];
  const field = fieldName(path);
  const subject = field || `The parameters of ${method}`;
  const schema = iss.schema ?? iss.inst;
  const need = schema instanceof z.ZodType ? needOf(schema, lastName(path)) : null;
  // A field left out: the object ran its schema on undefined.
  if (iss.input === undefined && path.length > 0 && need && ['invalid_type', 'invalid_value', 'invalid_union'].includes(iss.code ?? '')) {
    return { message: `Required (${need}).`, sentence: `${field} is required (${need}).` };
  }
  switch (iss.code) {
    case 'invalid_type':
      return need ? mustBe(subject, need, gotOf(iss.input, schema)) : undefined;
    case 'too_small':
    case 'too_big':
      return sizeWords(iss, subject, need);
    case 'invalid_value': {
      const choices = oneOf(iss.values);
      const guess = typeof iss.input === 'string' ? closest(iss.input, iss.values.filter((v): v is string => typeof v === 'string')) : null;
      return { message: `Must be ${choices}.`, sentence: `${subject} must be ${choices}${guess === null ? '.' : `; did you mean "${guess}"?`}` };
    }
    case 'invalid_union': {
      if (typeof iss.discriminator === 'string' && Array.isArray(iss.options)) {
        // A discriminated union: the path already ends at the field that chooses (vault.init's
        // protection), and the input is the whole object.
        const choices = oneOf(iss.options);
        const chosen = isRecord(iss.input) ? iss.input[iss.discriminator] : undefined;
        if (chosen === undefined) return { message: `Required (${choices}).`, sentence: `${field} is required (${choices}).` };
        return { message: `Must be ${choices}.`, sentence: `${subject} must be ${choices}.` };
      }
      // Options that took a value of this kind and refused it for what it says (a host name with a
      // control character) tell more than "must be text": their own words, each.
      // Bytes (the one custom option) refuses a value only for its kind, like a wrong type.
      const options = schema instanceof z.ZodUnion ? schema.def.options : [];
      const fitting = iss.errors.filter((list, k) => !(options[k] instanceof z.ZodCustom) && !list.some((i) => i.path.length === 0 && WRONG_KIND.has(i.code)));
      if (fitting.length > 0) {
        const words = [...new Set(fitting.map((list) => withStop(resolve(list[0]?.message ?? 'Not valid.'))))].join(' Or: ');
        return { message: words, sentence: field ? `${field}: ${words}` : words };
      }
      return need ? mustBe(subject, need, gotOf(iss.input, schema)) : undefined;
    }
    case 'unrecognized_keys':
      return unknownFields(iss.keys, schema, field, method);
    case 'invalid_format': {
      const form =
        (schema instanceof z.ZodType ? describedNeed(schema) : undefined) ??
        (iss.format === 'datetime' ? 'a date and time such as 2025-01-31T12:00:00Z (ISO 8601)' : iss.format === 'regex' ? `text matching ${String(iss.pattern)}` : `a valid ${iss.format}`);
      return { message: `Must be ${form}.`, sentence: `${subject} must be ${form}.` };
    }
    case 'not_multiple_of':
      return { message: `Must be a multiple of ${iss.divisor}.`, sentence: `${subject} must be a multiple of ${iss.divisor}; got ${String(iss.input)}.` };
    default:
      return undefined;
  }
}

function mustBe(subject: string, need: string, got: string): Worded {
  return { message: `Must be ${need}.`, sentence: `${subject} must be ${need}; got ${got}.` };
}

/** Numbers out of range (with the range), text too short or long, lists too long. */
function sizeWords(iss: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig>, subject: string, need: string | null): Worded | undefined {
  const small = iss.code === 'too_small';
  const limit = String(small ? iss.minimum : iss.maximum);
  const input = iss.input;
  switch (iss.origin) {
    case 'number':
    case 'int':
      return need ? { message: `Must be ${need}.`, sentence: `${subject} must be ${need}; got ${String(input)}.` } : undefined;
    case 'string': {
      const length = typeof input === 'string' ? `; it has ${input.length}` : '';
      if (small && Number(limit) <= 1) return { message: 'Cannot be empty.', sentence: `${subject} cannot be empty.` };
      return small
        ? { message: `At least ${limit} characters.`, sentence: `${subject} must be at least ${limit} characters long${length}.` }
        : { message: `At most ${limit} characters.`, sentence: `${subject} must be at most ${limit} characters long${length}.` };
    }
    case 'array': {
      const count = Array.isArray(input) ? `; it has ${input.length}` : '';
      return small
        ? { message: `At least ${limit} items.`, sentence: `${subject} must have at least ${limit} items${count}.` }
        : { message: `At most ${limit} items.`, sentence: `${subject} must have at most ${limit} items${count}.` };
    }
    default:
      return undefined;
  }
}

/**
 * "recursiv is not a field of sftp.remove; did you mean recursive?" for a likely slip of the keys;
 * the others together, with the fields there are.
 */
function unknownFields(keys: string[], schema: unknown, field: string, method: string): Worded {
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const where = field ? `${field} in ${method}` : method;
  const sentences: string[] = [];
  const unguessed: string[] = [];
  for (const key of keys) {
    const guess = closest(key, known);
    if (guess === null) unguessed.push(key);
    else sentences.push(`${key} is not a field of ${where}; did you mean ${guess}?`);
  }
  if (unguessed.length > 0) {
    const these = unguessed.length === 1 ? `${unguessed[0] ?? ''} is not a field` : `${unguessed.join(', ')} are not fields`;
    sentences.push(known.length === 0 ? `${these} of ${where}, which takes none.` : `${these} of ${where}; its fields are ${known.join(', ')}.`);
  }
  return { message: `Not ${keys.length === 1 ? 'a field' : 'fields'} here: ${keys.join(', ')}.`, sentence: sentences.join(' ') };
}

/**
 * What a value of this schema is, for a person: "text", "a whole number from 1 to 65535", "one of
 * "ssh" or "rdp"". A contract schema with a description says it there, in words that follow "must
 * be" (sftp's Mode: 'octal text such as "755" or "0644", never a number'). null: a kind of schema
 * the contract does not use, left to zod's words.
 */
function needOf(schema: z.core.$ZodType, name: string): string | null {
  const described = describedNeed(schema);
  if (described) return described;
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodNonOptional ||
    schema instanceof z.ZodReadonly ||
    schema instanceof z.ZodCatch
  ) {
    return needOf(schema.def.innerType, name);
  }
  if (schema instanceof z.ZodNullable) {
    const inner = needOf(schema.def.innerType, name);
    return inner === null ? null : `${inner}, or null`;
  }
  if (schema instanceof z.ZodPipe) return needOf(schema.def.in, name);
  if (schema instanceof z.ZodString) return 'text';
  if (schema instanceof z.ZodNumber) return numberNeed(schema, name);
  if (schema instanceof z.ZodBoolean) return 'true or false';
  if (schema instanceof z.ZodEnum) return oneOf(schema.options);
  if (schema instanceof z.ZodLiteral) return oneOf([...schema.values]);
  if (schema instanceof z.ZodArray || schema instanceof z.ZodTuple) return 'a list';
  if (schema instanceof z.ZodObject || schema instanceof z.ZodRecord) return 'an object';
  if (schema instanceof z.ZodNull) return 'null';
  // The contract's one custom type is Bytes (define.ts): a Uint8Array, binary in the frame.
  if (schema instanceof z.ZodCustom) return 'bytes';
  if (schema instanceof z.ZodUnion) {
    const each = schema.def.options.map((o) => needOf(o, name));
    return each.every((n) => n !== null) ? [...new Set(each)].join(' or ') : null;
  }
  return null;
}

function describedNeed(schema: z.core.$ZodType): string | undefined {
  return z.globalRegistry.get(schema)?.description;
}

/**
 * "a whole number of milliseconds from 1 to 3600000": the range is what a person needs whether
 * the number was out of it, a fraction or not a number at all. The unit is read from the field's
 * name, as the contract names them: …Ms counts milliseconds, …Bytes bytes.
 */
function numberNeed(schema: z.ZodNumber, name: string): string {
  const unit = /Ms$/.test(name) ? ' of milliseconds' : /(^b|B)ytes$/.test(name) ? ' of bytes' : '';
  const what = `${schema.isInt ? 'a whole number' : 'a number'}${unit}`;
  const min = finite(schema.minValue);
  const max = finite(schema.maxValue);
  if (min !== null && max !== null) return `${what} from ${min} to ${max}`;
  if (min !== null) return `${what}, at least ${min}`;
  if (max !== null) return `${what}, at most ${max}`;
  return what;
}

/** A bound a person set (int() alone adds the safe-integer limits, which say nothing to anyone). */
function finite(bound: number | null): number | null {
  return bound === null || !Number.isFinite(bound) || Math.abs(bound) >= Number.MAX_SAFE_INTEGER ? null : bound;
}

/** `"ssh"`, `one of "ask", "auto" or "readonly"`. */
function oneOf(values: readonly unknown[]): string {
  const shown = values.map((v) => JSON.stringify(v) ?? String(v));
  if (shown.length <= 1) return shown[0] ?? 'nothing';
  return `one of ${shown.slice(0, -1).join(', ')} or ${shown.at(-1) ?? ''}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** What was sent instead: a number in a number field as itself ("got 1.5"), anything else by its kind. */
function gotOf(input: unknown, schema: unknown): string {
  return typeof input === 'number' && !Number.isNaN(input) && schema instanceof z.ZodNumber ? String(input) : kindOf(input);
}

/** What a value is, without saying what it holds (it may be a secret sent to the wrong field). */
function kindOf(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN (not a number)' : 'a number';
  if (typeof v === 'string') return 'text';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** Closest of `names` to `word` when it is a likely slip of the keys: at most 2 edits, and fewer than its length. */
function closest(word: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const name of names) {
    const d = name.toLowerCase() === word.toLowerCase() ? 0 : editDistance(word, name);
    if (d < bestDistance && d < word.length) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The last name in a path ("timeoutMs", "terminal.ringBufferBytes"), for the unit a number counts. */
function lastName(path: readonly PropertyKey[]): string {
  const last = [...path].reverse().find((seg) => typeof seg === 'string');
  return typeof last === 'string' ? last : '';
}
