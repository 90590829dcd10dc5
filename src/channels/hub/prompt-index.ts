import type { InteractionRecord } from '../../store/index.js';
import type { MessageRef, RenderedApproval } from '../adapter.js';
import { shortIdOf, SHORT_ID_LENGTH } from '../render.js';
import { sameChat, sessionKey, type ChatTarget } from './chat-target.js';

/** An ask shown (or to be shown) in a chat. */
export interface Prompt {
  interactionId: string;
  runId: string;
  /** The 12-character form; people see its first 6. */
  matchId: string;
  target: ChatTarget;
  kind: RenderedApproval['kind'];
  text?: string;
  ref?: MessageRef;
}

export interface Closed extends Prompt {
  outcome: string;
}

export type Found =
  | { type: 'open'; prompt: Prompt }
  | { type: 'closed'; prompt: Closed }
  | { type: 'ambiguous'; ids: string[] }
  | { type: 'none' };

/** How many closed asks (and answer facts) are kept in memory; older ones are read from the store. */
export const MAX_CLOSED = 10_000;

export function promptOf(record: InteractionRecord, target: ChatTarget): Prompt {
  const kind = record.request.kind === 'confirm' ? 'approval' : record.request.kind === 'input' ? 'input' : 'question';
  return { interactionId: record.id, runId: record.runId, matchId: shortIdOf(record.id), target, kind };
}

export function shortOf(prompt: Prompt): string {
  return prompt.matchId.slice(0, SHORT_ID_LENGTH);
}

function pushTo<T>(index: Map<string, T[]>, key: string, item: T): void {
  const list = index.get(key);
  if (list) list.push(item);
  else index.set(key, [item]);
}

function dropFrom<T>(index: Map<string, T[]>, key: string, item: T): void {
  const list = index.get(key);
  if (!list) return;
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) index.delete(key);
}

/**
 * The asks this hub knows: open ones, and the most recently closed (to tell a late tap how it ended).
 * Also by the short id people see (its first SHORT_ID_LENGTH characters) and by chat: a tap, a typed
 * id, a bare yes and every message to the agent look up their few asks there instead of going over
 * every chat's (1,000 wait at once in bench/channels.ts).
 */
export class PromptIndex {
  private readonly pending = new Map<string, Prompt>();
  private readonly closed = new Map<string, Closed>();
  private readonly openByShort = new Map<string, Prompt[]>();
  private readonly openByChat = new Map<string, Prompt[]>();
  private readonly closedByShort = new Map<string, Closed[]>();

  has(interactionId: string): boolean {
    return this.pending.has(interactionId);
  }

  get(interactionId: string): Prompt | undefined {
    return this.pending.get(interactionId);
  }

  add(prompt: Prompt): void {
    this.pending.set(prompt.interactionId, prompt);
    pushTo(this.openByShort, shortOf(prompt), prompt);
    pushTo(this.openByChat, sessionKey(prompt.target), prompt);
  }

  remove(prompt: Prompt): void {
    this.pending.delete(prompt.interactionId);
    dropFrom(this.openByShort, shortOf(prompt), prompt);
    dropFrom(this.openByChat, sessionKey(prompt.target), prompt);
  }

  /** Asks waiting in a chat. */
  waitingIn(target: ChatTarget): Prompt[] {
    return [...(this.openByChat.get(sessionKey(target)) ?? [])];
  }

  remember(closed: Closed): void {
    const known = this.closed.get(closed.interactionId);
    if (known) dropFrom(this.closedByShort, shortOf(known), known);
    this.closed.set(closed.interactionId, closed);
    pushTo(this.closedByShort, shortOf(closed), closed);
    if (this.closed.size > MAX_CLOSED) {
      const oldest = this.closed.values().next().value!;
      this.closed.delete(oldest.interactionId);
      dropFrom(this.closedByShort, shortOf(oldest), oldest);
    }
  }

  /** The ask of `here`'s channel a typed or tapped id names: open first, this chat's first. */
  find(id: string, here: ChatTarget): Found {
    const needle = id.toLowerCase();
    // Only this channel's asks: another channel (another Slack workspace, another bot) has its own
    // approvers and people, who must neither answer nor learn of asks they were not shown.
    const matches = (p: Prompt) =>
      p.target.channel === here.channel && (p.matchId.startsWith(needle) || p.interactionId === id);
    const open = this.openCandidates(id, needle).filter(matches);
    // This chat's asks first: the same prefix may be open in another chat too.
    const local = open.filter((p) => sameChat(p.target, here));
    const pick = local.length > 0 ? local : open;
    if (pick.length === 1) return { type: 'open', prompt: pick[0]! };
    const shown = Math.max(SHORT_ID_LENGTH, needle.length + 1);
    if (pick.length > 1) return { type: 'ambiguous', ids: pick.map((p) => p.matchId.slice(0, shown)) };
    // The most recently closed match.
    let last: Closed | undefined;
    if (needle.length >= SHORT_ID_LENGTH) {
      for (const p of this.closedByShort.get(needle.slice(0, SHORT_ID_LENGTH)) ?? []) if (matches(p)) last = p;
      const byId = this.closed.get(id);
      if (!last && byId && matches(byId)) last = byId;
    } else {
      for (const p of this.closed.values()) if (matches(p)) last = p;
    }
    return last ? { type: 'closed', prompt: last } : { type: 'none' };
  }

  /**
   * A button or a typed id of SHORT_ID_LENGTH or more: its few candidates by the short id (and the
   * full interaction id); a shorter prefix, typed, goes over every open ask.
   */
  private openCandidates(id: string, needle: string): Prompt[] {
    if (needle.length < SHORT_ID_LENGTH) return [...this.pending.values()];
    const found = [...(this.openByShort.get(needle.slice(0, SHORT_ID_LENGTH)) ?? [])];
    const byId = this.pending.get(id);
    if (byId && !found.includes(byId)) found.push(byId);
    return found;
  }
}

export function listText(prompts: Prompt[]): string {
  return prompts.map((p) => `• ${shortOf(p)} ${(p.text ?? '').split('\n')[1] ?? p.kind}`).join('\n');
}

export function alreadyText(prompt: Closed): string {
  const outcome = prompt.outcome.replace(/^\S+\s/u, '');
  return `"${shortOf(prompt)}" is no longer open: ${outcome.charAt(0).toLowerCase()}${outcome.slice(1)}`;
}
