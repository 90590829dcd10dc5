import { z } from 'zod';

/**
 * The two deliveries Sage reads, in the flattened shape the SDK's EventDispatcher hands to
 * handlers (header fields and event fields side by side); the webhook route flattens the same way.
 */

export const messageReceiveSchema = z.object({
  event_id: z.string().optional(),
  sender: z.object({
    sender_id: z.object({ open_id: z.string().min(1) }),
    sender_type: z.string().optional(),
  }),
  message: z.object({
    message_id: z.string().min(1),
    root_id: z.string().optional(),
    thread_id: z.string().optional(),
    chat_id: z.string().min(1),
    chat_type: z.string().optional(),
    message_type: z.string(),
    content: z.string(),
    mentions: z.array(z.object({ key: z.string() })).optional(),
  }),
});

export const cardActionSchema = z.object({
  event_id: z.string().optional(),
  operator: z.object({ open_id: z.string().min(1) }),
  action: z.object({ value: z.object({ cmd: z.string().min(1).max(256) }).passthrough() }),
  context: z.object({ open_message_id: z.string().min(1), open_chat_id: z.string().min(1) }),
});

/** `{"text":"@_user_1 hi"}` → `hi`: the text of a text message without its @-mention placeholders. */
export function textOf(message: z.infer<typeof messageReceiveSchema>['message']): string | undefined {
  if (message.message_type !== 'text') return undefined;
  let text: string;
  try {
    const parsed = z.object({ text: z.string() }).safeParse(JSON.parse(message.content));
    if (!parsed.success) return undefined;
    text = parsed.data.text;
  } catch {
    return undefined;
  }
  for (const mention of message.mentions ?? []) text = text.split(mention.key).join('');
  return text.trim();
}

/** The v2 envelope (`schema: "2.0"`, header + event) or a v1 one, flattened; `token` kept for the check. */
export function flattenEnvelope(body: Record<string, unknown>): { type?: string; token?: string; data: Record<string, unknown> } {
  if (body.schema === '2.0' && typeof body.header === 'object' && body.header !== null) {
    const header = body.header as Record<string, unknown>;
    const event = (typeof body.event === 'object' && body.event !== null ? body.event : {}) as Record<string, unknown>;
    return {
      ...(typeof header.event_type === 'string' ? { type: header.event_type } : {}),
      ...(typeof header.token === 'string' ? { token: header.token } : {}),
      data: { ...header, ...event },
    };
  }
  const event = (typeof body.event === 'object' && body.event !== null ? body.event : {}) as Record<string, unknown>;
  const type = typeof body.type === 'string' && body.type !== 'event_callback' ? body.type : (event.type as string | undefined);
  return { ...(type !== undefined ? { type } : {}), ...(typeof body.token === 'string' ? { token: body.token } : {}), data: { ...body, ...event } };
}
