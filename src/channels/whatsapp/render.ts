import type { RenderedApproval } from '../adapter.js';

/**
 * WhatsApp Cloud API message bodies. Interactive reply buttons are limited to 3 per message, a
 * title to 20 characters, the body to 1024; a plain text body to 4096. The button id carries the
 * option's command (≤ 64 bytes, well under the 256 allowed), so a tap arrives as the command.
 */
export const WHATSAPP_MAX_BUTTONS = 3;
export const WHATSAPP_MAX_TITLE = 20;
export const WHATSAPP_MAX_BODY = 1024;
export const WHATSAPP_MAX_TEXT = 4096;
const WHATSAPP_MAX_FOOTER = 60;

/** Cuts `text` to `max` characters (code points, as Meta counts), ending with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 1).join('') + '…';
}

export type WhatsappBody = Record<string, unknown>;

function textBody(to: string, text: string, contextId?: string): WhatsappBody {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    ...(contextId !== undefined ? { context: { message_id: contextId } } : {}),
    type: 'text',
    text: { body: clip(text, WHATSAPP_MAX_TEXT), preview_url: false },
  };
}

/** Button titles, clipped to 20 characters and made unique (Meta rejects two equal titles). */
function buttonTitles(labels: string[]): string[] {
  const seen = new Set<string>();
  return labels.map((label, i) => {
    let title = clip(label.trim() || `Option ${i + 1}`, WHATSAPP_MAX_TITLE);
    if (seen.has(title)) title = clip(`${i + 1}. ${label}`, WHATSAPP_MAX_TITLE);
    seen.add(title);
    return title;
  });
}

/**
 * The request bodies that show `text` (and the approval's buttons) to `to`, in order; the last one
 * is the message a later edit refers to. An approval whose text does not fit the 1024-character
 * interactive body is sent as a text message, then a short interactive message with the buttons.
 * Options past the third have no button; the text already carries their typed commands.
 */
export function renderWhatsapp(to: string, text: string, approval?: RenderedApproval, contextId?: string): WhatsappBody[] {
  if (approval === undefined || approval.options.length === 0) return [textBody(to, text, contextId)];
  const shown = approval.options.slice(0, WHATSAPP_MAX_BUTTONS);
  const titles = buttonTitles(shown.map((o) => o.label));
  const bodies: WhatsappBody[] = [];
  let body = text;
  if (Array.from(text).length > WHATSAPP_MAX_BODY) {
    bodies.push(textBody(to, text, contextId));
    body = `Answer ${approval.shortId} with a button, or type one of the commands above.`;
  }
  const extra = approval.options.length - shown.length;
  bodies.push({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    ...(contextId !== undefined && bodies.length === 0 ? { context: { message_id: contextId } } : {}),
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: body },
      ...(extra > 0 ? { footer: { text: clip(`${extra} more: type the command shown above`, WHATSAPP_MAX_FOOTER) } } : {}),
      action: {
        buttons: shown.map((option, i) => ({ type: 'reply', reply: { id: option.command, title: titles[i] } })),
      },
    },
  });
  return bodies;
}
