import type { InlineKeyboardButton, InlineKeyboardMarkup } from 'grammy/types';
import type { RenderedApproval } from '../adapter.js';

/**
 * Telegram formatting for Sage's messages. Text is sent with parse_mode HTML and every character
 * escaped, so what a tool wants to run (`ls *.ts && echo <done>`) shows exactly as typed; only the
 * approval's input view is wrapped in <pre> so a command reads as code.
 */

/** sendMessage / editMessageText: 1–4096 characters after entity parsing. */
export const TELEGRAM_MAX_TEXT = 4096;
/** callback_data: 1–64 bytes. */
export const TELEGRAM_MAX_CALLBACK_DATA = 64;
/** answerCallbackQuery text: 0–200 characters. */
export const TELEGRAM_MAX_CALLBACK_TEXT = 200;
/** Telegram has no hard label limit, but a phone cuts long labels; a question's options stay readable at this length. */
export const TELEGRAM_MAX_BUTTON_LABEL = 64;
/** An inline keyboard holds at most 100 buttons. */
export const TELEGRAM_MAX_BUTTONS = 100;

/** The three characters HTML parse mode requires escaped (Bot API "Formatting options"). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Splits text into messages of at most `max` UTF-16 units (how Telegram counts), at a line break
 * or a space when one is in the second half of the piece, never inside a surrogate pair.
 */
export function splitText(text: string, max = TELEGRAM_MAX_TEXT): string[] {
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    let skip = 1;
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) {
      cut = isHighSurrogate(rest.charCodeAt(max - 1)) ? max - 1 : max;
      skip = 0;
    }
    chunks.push(rest.slice(0, cut));
    rest = rest.slice(cut + skip);
  }
  chunks.push(rest);
  // Telegram refuses an empty (or all-blank) message text.
  return chunks.map((c) => (c.trim() === '' ? '…' : c));
}

/** For an edit (one message): keeps the end, where the outcome line is, and marks the cut. */
export function clipHead(text: string, max = TELEGRAM_MAX_TEXT): string {
  if (text.length <= max) return text;
  let start = text.length - (max - 1);
  // Do not start on the second half of a surrogate pair.
  if (isHighSurrogate(text.charCodeAt(start - 1))) start++;
  return `…${text.slice(start)}`;
}

/** Shortens to `max` characters (code points) with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** The HTML for one message: all escaped, the approval's input view (when it is there whole) as a code block. */
export function toHtml(text: string, inputView?: string): string {
  const at = inputView ? text.indexOf(inputView) : -1;
  if (!inputView || at < 0) return escapeHtml(text);
  return `${escapeHtml(text.slice(0, at))}<pre>${escapeHtml(inputView)}</pre>${escapeHtml(text.slice(at + inputView.length))}`;
}

/** Core styles to Telegram's: the core's primary is the go-ahead (green), danger is red. */
const STYLE = { primary: 'success', danger: 'danger' } as const;

/**
 * The approval's buttons. `callbackData` turns an option's command into the button's payload (the
 * command itself when it fits 64 bytes). Short labels share a row (Approve once | Always), long
 * ones (a question's options) get a row each.
 */
export function inlineKeyboard(approval: RenderedApproval | undefined, callbackData: (command: string) => string): InlineKeyboardMarkup | undefined {
  if (!approval || approval.options.length === 0) return undefined;
  const buttons: InlineKeyboardButton.CallbackButton[] = approval.options.slice(0, TELEGRAM_MAX_BUTTONS).map((option) => ({
    text: clip(option.label, TELEGRAM_MAX_BUTTON_LABEL),
    callback_data: callbackData(option.command),
    ...(option.style ? { style: STYLE[option.style] } : {}),
  }));
  const perRow = buttons.every((b) => b.text.length <= 20) ? 2 : 1;
  const rows: InlineKeyboardButton.CallbackButton[][] = [];
  for (let i = 0; i < buttons.length; i += perRow) rows.push(buttons.slice(i, i + perRow));
  return { inline_keyboard: rows };
}
