import { randomUUID } from 'node:crypto';
import type { StartOptions } from '../../durable/index.js';
import type { InboundMessage } from '../adapter.js';
import { sessionKey, type ChatTarget } from './chat-target.js';
import { joinTexts, queuedMessage, type ChatQueue } from './chat-queue.js';
import type { HubContext } from './context.js';
import type { RunUpdates } from './run-updates.js';
import type { Session } from './sessions.js';

/** A chat's new run, admitted by the host's admission point as a web run is. */
export class RunStart {
  constructor(
    private readonly ctx: HubContext,
    private readonly queue: ChatQueue,
    private readonly updates: RunUpdates,
  ) {}

  /**
   * A new run for the chat: its task is what waits in the queue (messages of a run that ended
   * before reading them) followed by `m`. Handed over like a next message: reserved for the new
   * run's id before it starts, removed once it exists.
   */
  async start(target: ChatTarget, session: Session, m?: InboundMessage): Promise<void> {
    const { runner, store, log } = this.ctx.options;
    const key = sessionKey(target);
    const runId = `run_${randomUUID()}`;
    const token = `run:${runId}`;
    const reserved = await this.queue.reserve(key, token);
    const messages = [...reserved.map(queuedMessage), ...(m ? [m] : [])];
    if (messages.length === 0) return;
    const text = joinTexts(messages);
    // The run is its sender's: their principal (`telegram:42`) or the server user they are mapped to.
    const by = this.ctx.identityOf(m ?? messages[0]!);
    try {
      const spec = await this.admit(target, text, by);
      const handle = await runner.start(text, { ...spec, runId, userId: by, sessionId: key, channel: target.channel });
      session.runId = handle.runId;
      this.updates.watch(handle.runId, target);
      handle.outcome.catch(() => {});
      if (reserved.length) await this.queue.settle(key, token, 'delivered');
    } catch (error) {
      // Stored before the failure: the run has them as its task.
      if (reserved.length) await this.queue.settle(key, token, (await store.getRun(runId)) ? 'delivered' : 'released');
      log.warn({ err: error, channel: target.channel, chatId: target.chatId }, 'chat run did not start');
      await this.ctx.say(target, `Could not start a run: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The sender's limits, the channel's folder and agent, then the host's admission. */
  private async admit(target: ChatTarget, task: string, by: string): Promise<StartOptions> {
    const { options } = this.ctx;
    const config = this.ctx.configs.get(target.channel)!;
    await options.assertRunCapacity?.(by);
    const cwd = options.cwd(config.cwd);
    // An external agent for this channel's runs (its calls still pass the chat run's gate).
    const agentParts = config.agent ? options.agentRun?.(config.agent, cwd) : undefined;
    if (config.agent && !agentParts) throw new Error(`the agent ${config.agent} is not available on this server`);
    return options.admitRun({
      task,
      surface: 'chat',
      model: agentParts?.agent ? `agent:${agentParts.agent.name}` : options.model(),
      ...(agentParts?.agent ? { agent: agentParts.agent } : {}),
      ...(agentParts?.chain ? { chain: agentParts.chain } : {}),
      cwd,
      principal: by,
      chat: target,
      interactionTimeoutMs: options.interactionTimeoutMs ?? config.approvalTimeoutSeconds * 1000,
      server: options.serverGrant(),
    });
  }
}
