import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
  InvalidResponseError,
} from '../../interaction/index.js';
import type { InteractionRecord } from '../../store/index.js';
import type { InboundMessage, InboundResult } from '../adapter.js';
import type { Answers } from './answers.js';
import type { HubContext } from './context.js';
import { alreadyText, shortOf, type Prompt } from './prompt-index.js';

function isClosedError(error: unknown): boolean {
  return (
    InteractionAlreadyAnsweredError.isInstance(error) ||
    InteractionExpiredError.isInstance(error) ||
    InteractionCancelledError.isInstance(error) ||
    InteractionNotFoundError.isInstance(error)
  );
}

/**
 * The answer to a question typed or tapped in a chat: an option's number (tapped), its label or
 * value, or free text. A reply (a notice) when it fits none.
 */
function questionBody(
  request: InteractionRecord['request'],
  prompt: Prompt,
  value: string,
  typed: boolean,
): Record<string, unknown> | string {
  const n = /^\d+$/.test(value) && !typed ? Number(value) : undefined;
  if (request.kind === 'questions') {
    const answers: Record<string, string> = {};
    for (const q of request.questions) {
      answers[q.question] = n !== undefined && q.options[n - 1] ? q.options[n - 1]!.label : value;
    }
    return { kind: 'questions', answers };
  }
  if (request.kind === 'select') {
    const option =
      n !== undefined ? request.options[n - 1] : request.options.find((o) => o.label === value || o.value === value);
    if (!option) return `"${value}" is not one of the options (1-${request.options.length}).`;
    return { kind: 'select', selected: [option.value] };
  }
  if (request.kind === 'input') return { kind: 'input', text: value };
  return `"${shortOf(prompt)}" is an approval: answer with /approve ${shortOf(prompt)} once|always|deny.`;
}

/** An approver's answer taken from a chat and given to the run; the chat is told how it went. */
export class Answering {
  constructor(
    private readonly ctx: HubContext,
    private readonly answers: Answers,
  ) {}

  async approval(
    m: InboundMessage,
    prompt: Prompt,
    decision: 'once' | 'always' | 'deny',
    reason?: string,
  ): Promise<InboundResult> {
    if (prompt.kind !== 'approval') {
      const id = shortOf(prompt);
      return this.ctx.reply(m, 'notice', `"${id}" is a question: answer it with /answer ${id} <option>.`);
    }
    const body = {
      kind: 'confirm',
      confirmed: decision !== 'deny',
      // "Always" covers this chat's conversation: the run's session rules, and the approval memory's window.
      ...(decision === 'always' ? { remember: 'session' } : {}),
      ...(reason ? { message: reason } : {}),
      userId: this.ctx.identityOf(m),
    };
    return this.deliver(m, prompt, body, decision === 'deny' ? 'Denied.' : 'Approved.');
  }

  async question(m: InboundMessage, prompt: Prompt, value: string, typed = false): Promise<InboundResult> {
    const record = await this.ctx.options.store.getInteraction(prompt.interactionId);
    if (!record) return this.ctx.reply(m, 'notice', 'That ask no longer exists.');
    const body = questionBody(record.request, prompt, value, typed);
    if (typeof body === 'string') return this.ctx.reply(m, 'notice', body);
    return this.deliver(m, prompt, { ...body, userId: this.ctx.identityOf(m) }, 'Answered.');
  }

  private async deliver(
    m: InboundMessage,
    prompt: Prompt,
    body: Record<string, unknown>,
    done: string,
  ): Promise<InboundResult> {
    try {
      await this.answers.give(prompt.interactionId, body, m.channel);
      return { handled: 'approval', notice: done };
    } catch (error) {
      if (isClosedError(error)) {
        const record = await this.ctx.options.store.getInteraction(prompt.interactionId);
        const outcome = record ? this.answers.outcomeText(record) : 'it no longer exists';
        return this.ctx.reply(m, 'notice', alreadyText({ ...prompt, outcome }));
      }
      if (InvalidResponseError.isInstance(error)) return this.ctx.reply(m, 'notice', error.message);
      throw error;
    }
  }
}
