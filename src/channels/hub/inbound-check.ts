import type { InboundMessage, InboundResult } from '../adapter.js';
import { parseChatCommand, type ChatCommand } from '../commands.js';
import type { Answering } from './answering.js';
import { targetOfMessage, type ChatTarget } from './chat-target.js';
import type { HubContext } from './context.js';
import { alreadyText, listText, shortOf } from './prompt-index.js';
import type { Prompts } from './prompts.js';
import { rightsOf, type SenderNames } from './senders.js';
import type { SessionCommands } from './session-commands.js';

/**
 * What runs before a message may reach the agent: who sent it (a stranger hears nothing), and
 * whether it answers an ask (a tap, `/approve`, `/answer`, a bare yes or no, text while a question
 * waits) or is a command. Returns undefined when the message is the agent's.
 */
export class InboundCheck {
  constructor(
    private readonly ctx: HubContext,
    private readonly names: SenderNames,
    private readonly prompts: Prompts,
    private readonly answering: Answering,
    private readonly commands: SessionCommands,
  ) {}

  async check(m: InboundMessage): Promise<InboundResult | undefined> {
    const config = this.ctx.configs.get(m.channel);
    if (!config) return { handled: 'ignored' };
    const { approver, allowed } = rightsOf(config, m.senderId);
    // Someone this channel does not serve hears nothing, not even a refusal: a reply would tell them
    // the bot is there, that something waits, and whom to impersonate.
    if (!allowed) return { handled: 'ignored' };
    this.names.note(m, this.ctx.identityOf(m));
    const command = parseChatCommand(m.text);
    const here = targetOfMessage(m);
    switch (command.type) {
      case 'approve':
      case 'answer':
        return this.byId(m, here, approver, command);
      case 'yes':
      case 'no': {
        const approvals = this.prompts.index.waitingIn(here).filter((p) => p.kind === 'approval');
        // No approval waits: a bare yes is text like any other (an answer to a question waiting here).
        if (approvals.length === 0) return this.typedAnswer(m, here, approver, m.text.trim());
        if (!approver) {
          const refusal = `Only an approver can answer the approval waiting here; you (${m.senderId}) are not one.`;
          return this.ctx.reply(m, 'notice', refusal);
        }
        if (approvals.length > 1) {
          const list = listText(approvals);
          return this.ctx.reply(m, 'notice', `${approvals.length} approvals wait here; answer one by id:\n${list}`);
        }
        return this.answering.approval(m, approvals[0]!, command.type === 'yes' ? 'once' : 'deny');
      }
      case 'bad':
        return this.ctx.reply(m, 'notice', command.message);
      case 'stop':
      case 'status':
      case 'new':
        return this.commands.run(m, command.type);
      case 'text':
        return this.typedAnswer(m, here, approver, command.text);
    }
  }

  /** `/approve <id> …` or `/answer <id> …`, typed or tapped: the ask of this channel the id names. */
  private async byId(
    m: InboundMessage,
    here: ChatTarget,
    approver: boolean,
    command: Extract<ChatCommand, { type: 'approve' | 'answer' }>,
  ): Promise<InboundResult> {
    let found = this.prompts.index.find(command.id, here);
    // Closed before a restart (this hub never saw it close): the store still knows how it ended.
    if (found.type === 'none') found = await this.prompts.findClosedInStore(command.id, here);
    if (found.type === 'ambiguous') {
      const ids = found.ids.join(', ');
      return this.ctx.reply(m, 'notice', `Several asks start with "${command.id}": ${ids}. Type more of the id.`);
    }
    if (found.type === 'closed') {
      const closed = found.prompt;
      if (m.fromButton && m.messageRef && closed.text !== undefined) {
        await this.ctx.bus.editOutbound(m.channel, m.messageRef, { text: `${closed.text}\n\n${closed.outcome}` });
      }
      return this.ctx.reply(m, 'notice', alreadyText(closed));
    }
    if (found.type === 'none') {
      const none = `No ask "${command.id}" waits (unknown id, or it is no longer open). /status lists what waits here.`;
      return this.ctx.reply(m, 'notice', none);
    }
    const prompt = found.prompt;
    if (!approver) {
      const refusal = `Only an approver can answer "${shortOf(prompt)}"; you (${m.senderId}) are not one.`;
      return this.ctx.reply(m, 'notice', refusal);
    }
    if (m.messageRef && !prompt.ref) prompt.ref = m.messageRef;
    if (command.type === 'approve') return this.answering.approval(m, prompt, command.decision, command.reason);
    return this.answering.question(m, prompt, command.value);
  }

  /**
   * Text typed while a question waits in this chat is its answer (an option's label, or "Other"),
   * so only an approver's is taken; another sender's is refused rather than handed to the agent,
   * which would read it as the answer it asked for. With no question waiting it is the agent's.
   */
  private async typedAnswer(
    m: InboundMessage,
    here: ChatTarget,
    approver: boolean,
    text: string,
  ): Promise<InboundResult | undefined> {
    const question = this.prompts.index.waitingIn(here).find((p) => p.kind !== 'approval');
    if (!question) return undefined;
    if (!approver) {
      const id = shortOf(question);
      const refusal =
        `Only an approver can answer the question waiting here ("${id}"); you (${m.senderId}) are not one.`;
      return this.ctx.reply(m, 'notice', refusal);
    }
    return this.answering.question(m, question, text, true);
  }
}
