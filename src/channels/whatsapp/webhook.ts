import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * The inbound side of the WhatsApp Cloud API webhook: Meta's signature check and the payload
 * shapes Sage reads. Everything else Meta sends (statuses, reactions, media) is dropped.
 */

/** True when `header` is `sha256=<hex HMAC-SHA256 of rawBody keyed by the app secret>`; compared in constant time. */
export function verifyMetaSignature(rawBody: Buffer, header: string | null, appSecret: string): boolean {
  if (header === null || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  // A malformed hex string decodes short; the length check keeps timingSafeEqual from throwing.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Constant-time string equality (the verify token). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const inboundMessageSchema = z.object({
  id: z.string().min(1).max(256),
  from: z.string().min(1),
  /** When the person sent it, unix seconds as a string (signed with the rest of the body). */
  timestamp: z.string().regex(/^\d{1,12}$/).optional(),
  type: z.string(),
  text: z.object({ body: z.string() }).optional(),
  interactive: z
    .object({
      type: z.string(),
      button_reply: z.object({ id: z.string(), title: z.string() }).optional(),
    })
    .optional(),
  /** A template's quick-reply button. */
  button: z.object({ payload: z.string(), text: z.string() }).optional(),
  /** For a reply or a button press: the message it answers. */
  context: z.object({ id: z.string() }).optional(),
});

export const whatsappWebhookSchema = z.object({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(
    z.object({
      changes: z.array(
        z.object({
          field: z.string(),
          value: z.object({
            metadata: z.object({ phone_number_id: z.string() }).optional(),
            contacts: z.array(z.object({ wa_id: z.string(), profile: z.object({ name: z.string() }).optional() })).optional(),
            messages: z.array(inboundMessageSchema).optional(),
          }),
        }),
      ),
    }),
  ),
});

/** One message as the adapter hands it on: typed text or a button's command. */
export interface ParsedWhatsappMessage {
  id: string;
  /** When it was sent, unix seconds, when Meta said. */
  sentAt?: number;
  from: string;
  name?: string;
  text: string;
  fromButton: boolean;
  /** The message that carried the button (or that a reply quotes). */
  contextId?: string;
}

/**
 * The messages of one webhook delivery addressed to `phoneNumberId`. A delivery for another
 * number of the same business account is not ours; unsupported message types are skipped.
 */
export function parseWhatsappMessages(payload: z.infer<typeof whatsappWebhookSchema>, phoneNumberId: string): ParsedWhatsappMessage[] {
  const out: ParsedWhatsappMessage[] = [];
  for (const entry of payload.entry) {
    for (const change of entry.changes) {
      if (change.field !== 'messages') continue;
      const value = change.value;
      if (value.metadata !== undefined && value.metadata.phone_number_id !== phoneNumberId) continue;
      for (const message of value.messages ?? []) {
        const name = value.contacts?.find((c) => c.wa_id === message.from)?.profile?.name;
        let text: string | undefined;
        let fromButton = false;
        if (message.type === 'text' && message.text) text = message.text.body;
        else if (message.type === 'interactive' && message.interactive?.button_reply) {
          text = message.interactive.button_reply.id;
          fromButton = true;
        } else if (message.type === 'button' && message.button) {
          text = message.button.payload;
          fromButton = true;
        }
        if (text === undefined) continue;
        out.push({
          id: message.id,
          ...(message.timestamp !== undefined ? { sentAt: Number(message.timestamp) } : {}),
          from: message.from,
          ...(name !== undefined ? { name } : {}),
          text,
          fromButton,
          ...(message.context ? { contextId: message.context.id } : {}),
        });
      }
    }
  }
  return out;
}
