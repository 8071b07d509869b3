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
  return { input, output, description };
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
