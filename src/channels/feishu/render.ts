import type { RenderedApproval } from '../adapter.js';

/**
 * Feishu/Lark message cards. Every Sage message is a card (a plain text div), so any of them can
 * be updated later (PATCH works on cards only); `update_multi` makes an update visible to everyone
 * in the chat. An approval adds buttons whose callback value is `{ cmd: <command> }`.
 */
export const FEISHU_MAX_TEXT = 8000;
export const FEISHU_MAX_BUTTONS = 20;
export const FEISHU_MAX_BUTTON_LABEL = 40;

export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 1).join('') + '…';
}

export function renderFeishuCard(text: string, approval?: RenderedApproval): Record<string, unknown> {
  const elements: Record<string, unknown>[] = [{ tag: 'div', text: { tag: 'plain_text', content: clip(text, FEISHU_MAX_TEXT) } }];
  if (approval !== undefined && approval.options.length > 0) {
    elements.push({
      tag: 'action',
      actions: approval.options.slice(0, FEISHU_MAX_BUTTONS).map((option) => ({
        tag: 'button',
        text: { tag: 'plain_text', content: clip(option.label, FEISHU_MAX_BUTTON_LABEL) },
        type: option.style ?? 'default',
        value: { cmd: option.command },
      })),
    });
  }
  return { config: { wide_screen_mode: true, update_multi: true }, elements };
}
