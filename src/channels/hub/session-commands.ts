import type { InboundMessage, InboundResult } from '../adapter.js';
import type { Answers } from './answers.js';
import { sessionKey, targetOfMessage } from './chat-target.js';
import type { ChatQueue } from './chat-queue.js';
import type { HubContext } from './context.js';
import { listText, type PromptIndex } from './prompt-index.js';
import type { Sessions } from './sessions.js';

export type SessionCommand = 'stop' | 'status' | 'new';

const STARTING_OVER = 'Starting over: your next message starts a new run.';

/** `/status`, `/stop` and `/new`, run in the chat's session (after what came before them there). */
export class SessionCommands {
  constructor(
    private readonly ctx: HubContext,
    private readonly sessions: Sessions,
    private readonly queue: ChatQueue,
    private readonly prompts: PromptIndex,
    private readonly answers: Answers,
  ) {}

  run(m: InboundMessage, command: SessionCommand): Promise<InboundResult> {
    return this.sessions.run(targetOfMessage(m), () => (command === 'status' ? this.status(m) : this.end(m, command)));
  }

  private async status(m: InboundMessage): Promise<InboundResult> {
    const target = targetOfMessage(m);
    const run = await this.sessions.currentRun(target, this.sessions.get(target)!);
    const waiting = this.prompts.waitingIn(target);
    const queued = await this.queue.count(sessionKey(target));
    const lines = [
      run
        ? `Run ${run.id}: ${run.status}${queued ? `, ${queued} message(s) queued` : ''}.`
        : `No run in this chat.${queued ? ` ${queued} queued message(s) go to the run your next message starts.` : ''}`,
    ];
    lines.push(waiting.length ? `Waiting for an answer:\n${listText(waiting)}` : 'Nothing waits for an answer here.');
    return this.ctx.reply(m, 'notice', lines.join('\n'));
  }

  /** `/stop` cancels the chat's run; `/new` ends it (done if idle); both drop what is queued. */
  private async end(m: InboundMessage, command: 'stop' | 'new'): Promise<InboundResult> {
    const target = targetOfMessage(m);
    const session = this.sessions.get(target)!;
    const run = await this.sessions.currentRun(target, session);
    await this.queue.drop(sessionKey(target));
    if (!run) return this.ctx.reply(m, 'notice', command === 'new' ? STARTING_OVER : 'No run to stop in this chat.');
    const ask = await this.sessions.nextMessageAsk(run.id);
    if (command === 'new' && ask) {
      // Idle: close it as done (its next-message ask answered with nothing ends it completed).
      const body = { kind: 'input', text: '', userId: this.ctx.identityOf(m) };
      await this.answers.give(ask.id, body, m.channel).catch(() => {});
    } else {
      const reason = `stopped by ${m.senderName ?? m.senderId} in ${m.channel}`;
      await this.ctx.options.runner.cancel(run.id, reason).catch(() => {});
    }
    session.runId = undefined;
    return this.ctx.reply(m, 'notice', command === 'new' ? STARTING_OVER : 'Stopped; its open asks are closed.');
  }
}
