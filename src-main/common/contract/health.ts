import { z } from 'zod';
import { Empty, method } from './define.js';

const JsonSchema = z.record(z.string(), z.unknown());

export const MethodInfo = z.object({
  name: z.string(),
  description: z.string(),
  implemented: z.boolean(),
  input: JsonSchema,
  output: JsonSchema,
});

export const EventInfo = z.object({ name: z.string(), description: z.string(), payload: JsonSchema });

export const healthMethods = {
  'health.info': method(
    Empty.optional(),
    z.object({
      name: z.literal('wraith'),
      version: z.string(),
      host: z.enum(['electron', 'server', 'in-process']),
      dataDir: z.string(),
      methods: z.array(MethodInfo),
      events: z.array(EventInfo),
    }),
    'Describes this host: version and every method and event with its JSON Schema.',
  ),
  'health.ping': method(Empty.optional(), z.object({ ok: z.literal(true) }), 'No-op round trip.'),
};
