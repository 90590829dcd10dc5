/**
 * One copy of each text that many runs hold alike: a system prompt (~4 KB), a tool's description.
 * A live run keeps its own reference; built or parsed again per run, each would be its own copy
 * (a thousand waiting chats held a thousand prompts, bench/channels.ts). Bounded: when full, the
 * text kept longest goes first, so a process that sees many different texts holds at most `max`.
 */
export class TextPool {
  private readonly texts = new Map<string, string>();

  constructor(private readonly max = 32) {}

  /** The pool's copy of `text` (the same string value), kept from now on if it was not there. */
  share(text: string): string {
    const kept = this.texts.get(text);
    if (kept !== undefined) return kept;
    if (this.texts.size >= this.max) this.texts.delete(this.texts.keys().next().value!);
    this.texts.set(text, text);
    return text;
  }
}
