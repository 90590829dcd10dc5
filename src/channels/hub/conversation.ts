import type { InteractionRecord } from '../../store/index.js';
import type { InboundMessage, InboundResult } from '../adapter.js';
import type { Answers } from './answers.js';
import { sessionKey, targetOfMessage, type ChatTarget } from './chat-target.js';
import { answeredWith, joinTexts, queuedMessage, type ChatQueue } from './chat-queue.js';
import type { HubContext } from './context.js';
import type { RunStart } from './run-start.js';
import type { Session, Sessions } from './sessions.js';

/**
 * A chat's messages to its agent: a new run's task, the answer to the run's next-message ask, or
 * queued while the run works and handed over at its next ask.
 */
export class Conversation {
  constructor(
    private readonly ctx: HubContext,
    private readonly sessions: Sessions,
    private readonly queue: ChatQueue,
    private readonly runs: RunStart,
    private readonly answers: Answers,
  ) {}

  /** A message the inbound check left alone: it is the agent's. */
  toAgent(m: InboundMessage): Promise<InboundResult> {
    const target = targetOfMessage(m);
    return this.sessions.run(target, async (session) => {
      const run = await this.sessions.currentRun(target, session);
      if (!run) {
        await this.runs.start(target, session, m);
        return { handled: 'agent' };
      }
      const ask = await this.sessions.nextMessageAsk(run.id);
      if (ask) await this.deliverQueued(target, session, ask, m);
      else await this.queue.enqueue(target, m);
      return { handled: 'agent' };
    });
  }

  /** The run asks for its next message (`nextMessage`: its notification says so without a read). */
  async onNextMessageAsk(target: ChatTarget, interactionId: string, known?: InteractionRecord): Promise<void> {
    // Only what the chat queued goes to it, and a chat with nothing queued (most) needs no read of
    // the ask. Decided in the chat's session, after any message being queued there (enqueue marks
    // the chat before its commit).
    await this.sessions.run(target, async (session) => {
      if (known) return this.deliverQueued(target, session, known);
      if (!this.queue.mayHave(sessionKey(target))) return;
      const record = await this.ctx.options.store.getInteraction(interactionId);
      if (record?.status === 'pending') await this.deliverQueued(target, session, record);
    });
  }

  /** At start: a chat's queued messages go to its run if that run waits for its next message. */
  deliverWaiting(target: ChatTarget): Promise<void> {
    return this.sessions.run(target, async (session) => {
      const run = await this.sessions.currentRun(target, session);
      if (!run) return;
      const ask = await this.sessions.nextMessageAsk(run.id);
      if (ask) await this.deliverQueued(target, session, ask);
    });
  }

  /**
   * The run asks for its next message: everything queued (and `extra`, the message being handled)
   * goes to it as one message.
   *
   * The answer that delivers them is committed by the durable runner in its own transaction (the
   * live loop's fenced claim, or the claim that resumes a released run), so the queue cannot be
   * emptied in that same transaction without reaching into the runner. Instead the queued messages
   * are reserved for this ask (`ask:<id>`, one transaction) right before the answer and removed right
   * after it. A crash in between leaves them reserved, and the next start reads the ask: answered
   * with their text → they reached the run (removed, never sent twice); otherwise → back in the
   * queue (never lost), handed to the ask again if it still waits.
   */
  private async deliverQueued(
    target: ChatTarget,
    session: Session,
    ask: InteractionRecord,
    extra?: InboundMessage,
  ): Promise<void> {
    const { store, log } = this.ctx.options;
    const key = sessionKey(target);
    const token = `ask:${ask.id}`;
    const reserved = await this.queue.reserve(key, token);
    const messages = [...reserved.map(queuedMessage), ...(extra ? [extra] : [])];
    if (messages.length === 0) return;
    const text = joinTexts(messages);
    try {
      const userId = this.ctx.identityOf(messages[0]!);
      await this.answers.give(ask.id, { kind: 'input', text, userId }, target.channel);
    } catch (error) {
      // The answer may have been committed before something after it failed: the ask's record says.
      if (await answeredWith(store, ask.id, text)) {
        if (reserved.length) await this.queue.settle(key, token, 'delivered');
        log.warn({ err: error, chatId: target.chatId }, 'next message delivered, then the run could not be woken here');
        return;
      }
      // Answered or closed meanwhile (the run ended): the messages wait for the next run.
      if (reserved.length) await this.queue.settle(key, token, 'released');
      log.debug({ err: error, chatId: target.chatId }, 'next message not delivered');
      const run = await this.sessions.currentRun(target, session);
      if (!run) await this.runs.start(target, session, extra);
      else if (extra) await this.queue.enqueue(target, extra);
      return;
    }
    if (reserved.length) await this.queue.settle(key, token, 'delivered');
  }
}
