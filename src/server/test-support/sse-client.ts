import type { RunEvent } from '../../events/index.js';

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/**
 * A minimal SSE reader over fetch (what the web client also does): yields frames as they arrive
 * and can be cut off mid-stream with `abort()`, like a dropped connection.
 */
export class SseClient {
  readonly events: RunEvent[] = [];
  readonly frames: SseFrame[] = [];
  status = 0;
  private readonly abortController = new AbortController();
  private waiters: (() => void)[] = [];
  done: Promise<void>;

  constructor(url: string, init: { token?: string; lastEventId?: number; method?: string; body?: unknown } = {}) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (init.token) headers['authorization'] = `Bearer ${init.token}`;
    if (init.lastEventId !== undefined) headers['last-event-id'] = String(init.lastEventId);
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    this.done = (async () => {
      try {
        const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), signal: this.abortController.signal });
        this.status = res.status;
        if (!res.body) return;
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            this.take(block);
          }
        }
      } catch (error) {
        if ((error as Error).name !== 'AbortError') throw error;
      } finally {
        this.notify();
      }
    })();
  }

  private take(block: string): void {
    const frame: SseFrame = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0) return;
    frame.data = data.join('\n');
    this.frames.push(frame);
    if (frame.id !== undefined) this.events.push(JSON.parse(frame.data) as RunEvent);
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once an event matching `predicate` arrived (or rejects after the timeout). */
  async waitFor(predicate: (e: RunEvent) => boolean, timeoutMs = 5_000): Promise<RunEvent> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (Date.now() > until) throw new Error(`event not seen in time; got ${this.events.map((e) => e.type).join(', ')}`);
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), new Promise((r) => setTimeout(r, 50)), this.done]);
    }
  }

  abort(): void {
    this.abortController.abort();
  }
}
