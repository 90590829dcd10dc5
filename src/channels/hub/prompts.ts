import { askContextFor } from '../../runtime/ask-context.js';
import { isNextMessageRequest, type InteractionRecord } from '../../store/index.js';
import { renderInteraction, shortIdOf } from '../render.js';
import { answeredFacts, type Answers } from './answers.js';
import { sessionKey, type ChatTarget } from './chat-target.js';
import { fitPrompt } from './chat-text.js';
import type { HubContext } from './context.js';
import { promptOf, shortOf, type Closed, type PromptIndex } from './prompt-index.js';

/**
 * Asks shown in the chat they belong to: the prompt posted when one opens, edited to say who
 * answered, where and when (or how it ended) when it closes, whoever closed it.
 */
export class Prompts {
  constructor(
    private readonly ctx: HubContext,
    readonly index: PromptIndex,
    private readonly answers: Answers,
  ) {}

  /** The prompt's text as the chat shows it (the same text at every call: it derives from the record). */
  private async textOf(record: InteractionRecord, channel: string): Promise<string | undefined> {
    const adapter = this.ctx.adapters.get(channel);
    if (!adapter) return undefined;
    const rendered = renderInteraction(record, adapter.limits, await askContextFor(this.ctx.options.store, record));
    return rendered ? fitPrompt(rendered.text, adapter.limits.maxText) : undefined;
  }

  /**
   * Prompted before the restart: the message is in the chat already; a tap brings its ref. Its text
   * is rendered again so the answer can edit it.
   */
  async restore(record: InteractionRecord, target: ChatTarget): Promise<void> {
    const prompt = promptOf(record, target);
    const text = await this.textOf(record, target.channel);
    if (text !== undefined) prompt.text = text;
    this.index.add(prompt);
  }

  async show(record: InteractionRecord, target: ChatTarget): Promise<void> {
    const adapter = this.ctx.adapters.get(target.channel);
    const config = this.ctx.configs.get(target.channel);
    if (!adapter || !config) return;
    const prompt = promptOf(record, target);
    this.index.add(prompt);
    if (record.request.kind === 'confirm' && config.approvers.length === 0) {
      // askFallback: deny. Nobody here may approve, so the run is told at once instead of waiting.
      const message = `No approver is configured for ${target.channel} (askFallback: deny).`;
      const body = { kind: 'confirm', confirmed: false, message, userId: 'askFallback' };
      await this.answers.give(record.id, body, target.channel).catch(() => {});
      return;
    }
    const rendered = renderInteraction(record, adapter.limits, await askContextFor(this.ctx.options.store, record));
    if (!rendered) {
      await this.ctx.say(target, `A ${record.request.kind} request waits; answer it in the web page (${record.id}).`);
      return;
    }
    prompt.text = fitPrompt(rendered.text, adapter.limits.maxText);
    const ref = await this.ctx.bus.publishOutbound(target.channel, {
      chatId: target.chatId,
      ...(target.threadId ? { threadId: target.threadId } : {}),
      text: prompt.text,
      approval: rendered.approval,
    });
    if (ref) prompt.ref = ref;
  }

  /** The ask closed (answered here or elsewhere, expired, cancelled): its prompt says how. */
  async close(interactionId: string, status: string): Promise<void> {
    // The answer this hub gave, if it did: awaited (its notification can come before the runner's
    // reply) and then forgotten, whether or not a prompt shows it.
    const mine = this.answers.take(interactionId);
    const prompt = this.index.get(interactionId);
    if (!prompt) return;
    this.index.remove(prompt);
    const response = status === 'answered' ? await mine : undefined;
    const record = response
      ? answeredFacts(interactionId, response)
      : await this.ctx.options.store.getInteraction(interactionId);
    const outcome = record ? this.answers.outcomeText(record) : `closed (${status})`;
    this.index.remember({ ...prompt, outcome });
    if (prompt.ref && prompt.text !== undefined) {
      await this.ctx.bus.editOutbound(prompt.target.channel, prompt.ref, { text: `${prompt.text}\n\n${outcome}` });
    }
    // Without a ref (sent before a restart, or the send failed) the chat learns it from a new message;
    // an expiry is always posted too, so a phone that shows an old prompt sees it is gone.
    if (!prompt.ref || status === 'expired') await this.ctx.say(prompt.target, `[${shortOf(prompt)}] ${outcome}`);
  }

  /** A closed ask of this chat's recent runs whose short id starts with `id`, read from the store. */
  async findClosedInStore(
    id: string,
    here: ChatTarget,
  ): Promise<{ type: 'closed'; prompt: Closed } | { type: 'none' }> {
    const needle = id.toLowerCase();
    if (needle.length < 3) return { type: 'none' };
    const { store } = this.ctx.options;
    for (const run of await store.listRuns({ sessionId: sessionKey(here), limit: 5 })) {
      const closedAsks = await store.listInteractions({ runId: run.id, status: ['answered', 'expired', 'cancelled'] });
      for (const record of closedAsks) {
        if (isNextMessageRequest(record.request) || !shortIdOf(record.id).startsWith(needle)) continue;
        const text = await this.textOf(record, here.channel);
        const closed: Closed = {
          ...promptOf(record, here),
          outcome: this.answers.outcomeText(record),
          ...(text !== undefined ? { text } : {}),
        };
        this.index.remember(closed);
        return { type: 'closed', prompt: closed };
      }
    }
    return { type: 'none' };
  }
}
