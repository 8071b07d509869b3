import { z } from 'zod';
import type { EventDef, MethodDef } from './define.js';

export interface DescribedMethod {
  name: string;
  description: string;
  implemented: boolean;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

export interface DescribedEvent {
  name: string;
  description: string;
  payload: Record<string, unknown>;
}

// Bytes (Uint8Array) have no JSON Schema; they are described as "any" and documented as bytes.
const toSchema = (s: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(s, { unrepresentable: 'any', io }) as Record<string, unknown>;

/** The contract as JSON Schemas: what `wraith methods` prints and `health.info` returns. */
export function describeContract(
  methods: Record<string, MethodDef>,
  events: Record<string, EventDef>,
  isImplemented: (name: string) => boolean,
): { methods: DescribedMethod[]; events: DescribedEvent[] } {
  return {
    methods: Object.entries(methods).map(([name, def]) => ({
      name,
      description: def.description,
      implemented: isImplemented(name),
      input: toSchema(def.input, 'input'),
      output: toSchema(def.output, 'output'),
    })),
    events: Object.entries(events).map(([name, def]) => ({ name, description: def.description, payload: toSchema(def.payload, 'output') })),
  };
}
