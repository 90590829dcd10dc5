import { FINISHED_STATUSES, isNextMessageRequest, type InteractionRecord, type RunRecord } from '../../store/index.js';
import { sessionKey, type ChatTarget } from './chat-target.js';
import type { HubContext } from './context.js';

/** A chat's conversation with its run. */
export interface Session {
  target: ChatTarget;
  runId?: string;
  chain: Promise<unknown>;
}

/** Each chat's session: one thing at a time per chat, in arrival order, and the chat's current run. */
export class Sessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly ctx: HubContext) {}

  get(target: ChatTarget): Session | undefined {
    return this.sessions.get(sessionKey(target));
  }

  /** Runs `step` in the chat's session once what came before it there is done. */
  run<T>(target: ChatTarget, step: (session: Session) => Promise<T>): Promise<T> {
    const key = sessionKey(target);
    let session = this.sessions.get(key);
    if (!session) {
      session = { target, chain: Promise.resolve() };
      this.sessions.set(key, session);
    }
    const s = session;
    const next = s.chain.then(() => step(s));
    s.chain = next.catch(() => {});
    return next;
  }

  /** The chat's current run, if it has one that is not finished. */
  async currentRun(target: ChatTarget, session: Session): Promise<RunRecord | undefined> {
    const { store } = this.ctx.options;
    const run = session.runId
      ? await store.getRun(session.runId)
      : (await store.listRuns({ sessionId: sessionKey(target), limit: 1 }))[0];
    if (!run || FINISHED_STATUSES.includes(run.status)) {
      session.runId = undefined;
      return undefined;
    }
    session.runId = run.id;
    return run;
  }

  /** The run's ask for its next message, if it waits for one. */
  async nextMessageAsk(runId: string): Promise<InteractionRecord | undefined> {
    const pending = await this.ctx.options.store.listInteractions({ runId, status: ['pending'] });
    return pending.find((r) => isNextMessageRequest(r.request));
  }
}
