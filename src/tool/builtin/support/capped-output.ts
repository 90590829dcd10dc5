import { truncationMarker } from './truncate-middle.js';

/**
 * Collects a stream's text with bounded memory: the first half of the cap and a rolling last half,
 * so a command that prints gigabytes costs no more than `maxChars` to keep.
 */
export class CappedOutput {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(readonly maxChars: number) {
    this.headMax = Math.ceil(maxChars / 2);
    this.tailMax = maxChars - this.headMax;
  }

  append(chunk: string): void {
    this.total += chunk.length;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk.length === 0) return;
    this.tail += chunk;
    // Trim only when well past the limit so appends stay amortised O(1).
    if (this.tail.length > this.tailMax * 2) this.tail = this.tail.slice(-this.tailMax);
  }

  /** Characters dropped from the middle. */
  get truncated(): number {
    return Math.max(0, this.total - this.headMax - this.tailMax);
  }

  toString(): string {
    const removed = this.truncated;
    if (removed === 0) return this.head + this.tail;
    return this.head + truncationMarker(removed) + this.tail.slice(-this.tailMax);
  }
}
