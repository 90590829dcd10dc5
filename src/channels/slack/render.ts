import type { types } from '@slack/bolt';
import type { RenderedApproval } from '../adapter.js';

/**
 * Block Kit for Sage's messages. The text goes in plain_text sections (no mrkdwn, so a command like
 * `ls *.ts` shows as typed); an approval adds one actions block of buttons whose `value` is the
 * option's command, so a tap arrives as the same text a person could type.
 */
export const SLACK_MAX_SECTION = 3000;
export const SLACK_MAX_BUTTON_TEXT = 75;
export const SLACK_MAX_BUTTONS = 25;
/** chat.postMessage truncates `text` past 40,000 characters. */
export const SLACK_MAX_TEXT = 40_000;
/** Blocks per message. */
const SLACK_MAX_BLOCKS = 50;
/** Every Sage button's action_id starts with this, so the adapter listens to its own buttons only. */
export const SLACK_ACTION_PREFIX = 'sage_answer_';

export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 1).join('') + '…';
}

/** Slack's control characters in `text` (it is parsed for links and mentions): &, <, >. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export type SlackBlock = types.KnownBlock;

export function renderSlackBlocks(text: string, approval?: RenderedApproval): SlackBlock[] {
  const chars = Array.from(text.length === 0 ? ' ' : text);
  const sections: SlackBlock[] = [];
  for (let i = 0; i < chars.length && sections.length < SLACK_MAX_BLOCKS - 1; i += SLACK_MAX_SECTION) {
    sections.push({ type: 'section', text: { type: 'plain_text', text: chars.slice(i, i + SLACK_MAX_SECTION).join(''), emoji: false } });
  }
  if (approval === undefined || approval.options.length === 0) return sections;
  const buttons = approval.options.slice(0, SLACK_MAX_BUTTONS).map((option, i): types.Button => ({
    type: 'button',
    action_id: `${SLACK_ACTION_PREFIX}${i}`,
    text: { type: 'plain_text', text: clip(option.label, SLACK_MAX_BUTTON_TEXT), emoji: true },
    value: option.command,
    ...(option.style !== undefined ? { style: option.style } : {}),
  }));
  return [...sections, { type: 'actions', block_id: `sage_${approval.shortId}`, elements: buttons }];
}
