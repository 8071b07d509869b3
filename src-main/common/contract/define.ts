import { z } from 'zod';

/**
 * A method of the contract: a name, a zod input and output schema and a one-line description.
 * Methods exist once, here in `common`; every transport carries them unchanged.
 */
export interface MethodDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly input: I;
  readonly output: O;
  readonly description: string;
}

export interface EventDef<P extends z.ZodType = z.ZodType> {
  readonly payload: P;
  readonly description: string;
}

export function method<I extends z.ZodType, O extends z.ZodType>(
  input: I,
  output: O,
  description: string,
): MethodDef<I, O> {
  return { input: strictInput(input), output, description };
}

/**
 * The schema with every object in it strict: a field it does not name is refused (EBADARGS,
 * "recursiv is not a field of sftp.remove; did you mean recursive?") instead of dropped. A
 * dropped field is a silent wrong answer: `{"path": "/x", "recursiv": true}` deleted nothing
 * recursively and said ok. Every method's input gets it here, nested objects too, so no method
 * can forget it. Outputs stay as they are: a stored connection with a field this build does not
 * know must still list (the field is dropped there, never refused).
 */
function strictInput<S extends z.ZodType>(schema: S): S {
  // The clone has the same type as the schema it was made from: only unknown keys change.
  return strictened(schema) as S;
}

function strictened(s: z.core.$ZodType): z.core.$ZodType {
  // mergeDefs keeps a def's getters (a default's value is made afresh for every parse).
  const { mergeDefs } = z.core.util;
  if (s instanceof z.ZodObject) {
    const shape = Object.fromEntries(Object.entries(s.def.shape).map(([key, field]) => [key, strictened(field)]));
    // A catchall set on purpose (loose, or typed) stays; the default, which drops, becomes a refusal.
    return s.clone(mergeDefs(s.def, { shape, catchall: s.def.catchall ?? z.never() }));
  }
  if (
    s instanceof z.ZodOptional ||
    s instanceof z.ZodNullable ||
    s instanceof z.ZodDefault ||
    s instanceof z.ZodPrefault ||
    s instanceof z.ZodNonOptional ||
    s instanceof z.ZodReadonly ||
    s instanceof z.ZodCatch
  ) {
    return s.clone(mergeDefs(s.def, { innerType: strictened(s.def.innerType) }));
  }
  if (s instanceof z.ZodArray) return s.clone(mergeDefs(s.def, { element: strictened(s.def.element) }));
  // Discriminated unions too (they are unions); their options keep the discriminator.
  if (s instanceof z.ZodUnion) return s.clone(mergeDefs(s.def, { options: s.def.options.map(strictened) }));
  if (s instanceof z.ZodPipe) return s.clone(mergeDefs(s.def, { in: strictened(s.def.in), out: strictened(s.def.out) }));
  if (s instanceof z.ZodRecord) return s.clone(mergeDefs(s.def, { valueType: strictened(s.def.valueType) }));
  // Strings, numbers, enums, custom (bytes)…: nothing with fields. An intersection is left
  // alone on purpose: each side strict would refuse the other side's fields.
  return s;
}

export function event<P extends z.ZodType>(payload: P, description: string): EventDef<P> {
  return { payload, description };
}

/** Raw bytes. Travels as a binary frame / structured clone, never base64 or a JSON array. */
export const Bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'Expected bytes (Uint8Array)');

export const Id = z.string().min(1).max(128);
export const Empty = z.object({}).strict();
export const Ok = z.object({ ok: z.literal(true) });
export const OK: { ok: true } = { ok: true };

/** A field's schema without its default (the schema itself when it has none). */
type WithoutDefault<S> = S extends z.ZodDefault<infer Inner> ? Inner : S;

/**
 * A patch of an object: every field optional, and none defaulted. zod's partial() keeps each
 * field's default, so a field left out of a patch would come back as its default and overwrite
 * what is stored (a panel resize reset the font size; choosing a model unlinked the API key).
 */
export function patchOf<T extends z.ZodRawShape>(schema: z.ZodObject<T>): z.ZodObject<{ [K in keyof T]: z.ZodOptional<WithoutDefault<T[K]>> }> {
  const shape = Object.fromEntries(
    Object.entries(schema.shape).map(([key, field]) => [key, ((field instanceof z.ZodDefault ? field.unwrap() : field) as z.ZodType).optional()]),
  );
  return z.object(shape) as unknown as z.ZodObject<{ [K in keyof T]: z.ZodOptional<WithoutDefault<T[K]>> }>;
}
