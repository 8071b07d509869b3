import { z } from 'zod';

/**
 * The Messages API content we store and send, as zod schemas: what comes back out of SQLite is
 * parsed, not trusted. Shapes match the SDK's *Param types, so they pass to it unchanged.
 */
export const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
export const ImageBlock = z.object({
  type: z.literal('image'),
  source: z.object({
    type: z.literal('base64'),
    media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
    data: z.string(),
  }),
});
export const ToolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export const ToolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.array(z.discriminatedUnion('type', [TextBlock, ImageBlock])),
  is_error: z.boolean().optional(),
});
export const Block = z.discriminatedUnion('type', [TextBlock, ImageBlock, ToolUseBlock, ToolResultBlock]);
export const StoredMessage = z.object({ role: z.enum(['user', 'assistant']), content: z.array(Block) });

export type TextBlock = z.infer<typeof TextBlock>;
export type ImageBlock = z.infer<typeof ImageBlock>;
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;
export type Block = z.infer<typeof Block>;
export type StoredMessage = z.infer<typeof StoredMessage>;

/** The readable text of a message, for full-text search and titles. */
export function plainText(m: StoredMessage): string {
  const parts: string[] = [];
  for (const b of m.content) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'tool_use') parts.push(`${b.name} ${JSON.stringify(b.input)}`);
    else if (b.type === 'tool_result') for (const c of b.content) if (c.type === 'text') parts.push(c.text);
  }
  return parts.join('\n');
}
