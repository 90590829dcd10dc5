import { interactionResponseSchema, type InteractionResponse } from '../../interaction/index.js';
import type { InteractionRecord } from '../../store/index.js';
import { hhmm, via } from './chat-text.js';
import type { HubContext } from './context.js';
import { MAX_CLOSED } from './prompt-index.js';
import type { SenderNames } from './senders.js';

/** H5's `channel` field on answers, when this build has it (the schema is strict). */
const ANSWER_HAS_CHANNEL = 'channel' in interactionResponseSchema.shape;

/** What a chat's outcome line ("Approved by alice in slack at 14:02 UTC") is made of. */
export type OutcomeFacts = Pick<
  InteractionRecord,
  'id' | 'kind' | 'status' | 'response' | 'answeredBy' | 'answeredAt' | 'closedAt' | 'reason'
>;

/**
 * An ask this hub answered, as the store recorded it (answered_by is the response's userId,
 * answered_at its respondedAt; a response's kind is its request's, validated).
 */
export function answeredFacts(interactionId: string, response: InteractionResponse): OutcomeFacts {
  return {
    id: interactionId,
    kind: response.kind,
    status: 'answered',
    response,
    answeredBy: response.userId ?? null,
    answeredAt: response.respondedAt,
    closedAt: response.respondedAt,
    reason: null,
  };
}

/** The answers this hub gives to the runner, and the outcome line of any ask, whoever answered it. */
export class Answers {
  /**
   * Answers given through this hub, until their notification: the runner's result is what the store
   * recorded (the response, its userId and respondedAt become answered_by and answered_at), so the
   * prompt's edit needs no read of the record back. Undefined when the answer was refused.
   */
  private readonly given = new Map<string, Promise<InteractionResponse | undefined>>();
  /** Which channel answered an interaction through this hub (until the answer schema carries it). */
  private readonly answeredVia = new Map<string, string>();

  constructor(
    private readonly ctx: HubContext,
    private readonly names: SenderNames,
  ) {}

  async give(interactionId: string, body: Record<string, unknown>, channel: string): Promise<void> {
    this.answeredVia.set(interactionId, channel);
    if (this.answeredVia.size > MAX_CLOSED) this.answeredVia.delete(this.answeredVia.keys().next().value!);
    const response = { ...body, ...(ANSWER_HAS_CHANNEL ? { channel } : {}) };
    const answered = this.ctx.options.runner.respond(interactionId, response);
    this.given.set(
      interactionId,
      answered.then(
        (r) => r.response,
        () => undefined,
      ),
    );
    // Bounded like answeredVia: an answer whose notification never came here (a next-message ask,
    // a prompt this hub does not show) is forgotten with the oldest.
    if (this.given.size > MAX_CLOSED) this.given.delete(this.given.keys().next().value!);
    try {
      await answered;
    } catch (error) {
      // Not ours (answered elsewhere first, expired): the outcome must not name this channel.
      this.answeredVia.delete(interactionId);
      throw error;
    }
  }

  /** The answer this hub gave to `interactionId`, if it did, forgotten once taken. */
  take(interactionId: string): Promise<InteractionResponse | undefined> | undefined {
    const mine = this.given.get(interactionId);
    this.given.delete(interactionId);
    return mine;
  }

  outcomeText(record: OutcomeFacts): string {
    type Response = Record<string, unknown> & {
      confirmed?: boolean;
      remember?: string;
      message?: string;
      channel?: string;
    };
    const response = record.response as Response | null;
    const channel = response?.channel ?? this.answeredVia.get(record.id);
    const name = record.answeredBy && channel ? this.names.nameOf(record.answeredBy, channel) : undefined;
    const who = `${name ?? record.answeredBy ?? 'someone'}${via(channel)} at ${hhmm(record.answeredAt)}`;
    if (record.status === 'answered') {
      if (record.kind === 'confirm') {
        const always = response?.remember && response.remember !== 'once' ? ' (always)' : '';
        if (response?.confirmed) return `✅ Approved${always} by ${who}`;
        return `❌ Denied by ${who}${response?.message ? `: ${response.message}` : ''}`;
      }
      return `✅ Answered by ${who}`;
    }
    if (record.status === 'expired') {
      return (
        `⌛ Expired at ${hhmm(record.closedAt)}: nobody answered in time ` +
        '(the agent was told it timed out, not that it was denied).'
      );
    }
    return `⏹ Cancelled: ${record.reason ?? 'the run stopped'}`;
  }
}
