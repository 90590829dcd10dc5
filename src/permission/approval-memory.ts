import { hashInput } from './canonical-json.js';

export type Clock = () => number;

/**
 * Session approval memory: an approved MEDIUM-risk call is not asked again for the
 * window. The key binds channel, chat (session), tool and the SHA-256 of the whole input.
 */
export class ApprovalMemory {
  private readonly entries = new Map<string, number>();

  constructor(private readonly windowMs: () => number, private readonly clock: Clock = Date.now) {}

  static key(channel: string, chatId: string, toolName: string, input: unknown): string {
    return `${channel}:${chatId}:${toolName}:${hashInput(input)}`;
  }

  remember(key: string): void {
    this.entries.set(key, this.clock());
  }

  /** True while the approval is inside its window; an expired entry is dropped. */
  has(key: string): boolean {
    const at = this.entries.get(key);
    if (at === undefined) return false;
    if (this.clock() - at >= this.windowMs()) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  /** Drops every expired entry (called now and then so the map does not grow). */
  prune(): void {
    const now = this.clock();
    for (const [key, at] of this.entries) if (now - at >= this.windowMs()) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
