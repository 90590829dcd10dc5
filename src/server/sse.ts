import type { RunEvent } from '../events/index.js';
import { errorBody } from './error-response.js';

const encoder = new TextEncoder();

/** One SSE frame; the seq is the id so `Last-Event-ID` resumes right after it. JSON never holds a raw newline. */
export function formatEvent(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(withoutFullOutput(event))}\n\n`;
}

/**
 * A tool's whole output (up to megabytes, kept when the model's copy was cut) stays out of the
 * stream every viewer replays: the event says how long it is, and the page fetches the text on
 * demand from GET /runs/:id/tool-calls/:toolCallId/output.
 */
export function withoutFullOutput(event: RunEvent): RunEvent {
  if (event.type !== 'tool.completed' || event.data.fullContent === undefined) return event;
  const { fullContent, ...data } = event.data;
  return { ...event, data: { ...data, fullContentChars: fullContent.length } };
}

/** Frames by format, then by item: the same object sent in two formats gets two frames. */
const frames = new WeakMap<object, WeakMap<object, Uint8Array>>();

/**
 * The encoded frame of `item`, made once per object: streams that got the same object (a shared
 * read, one notification) send the same bytes instead of serialising it once per client. Nobody
 * writes into a frame after it is made, so sharing the buffer is safe.
 */
export function encodedFrame<T extends object>(item: T, format: (item: T) => string): Uint8Array {
  let byItem = frames.get(format);
  if (!byItem) {
    byItem = new WeakMap();
    frames.set(format, byItem);
  }
  let frame = byItem.get(item);
  if (!frame) {
    frame = encoder.encode(format(item));
    byItem.set(item, frame);
  }
  return frame;
}

const KEEP_ALIVE = encoder.encode(': keep-alive\n\n');

/**
 * One timer per interval for every open stream's keep-alive, instead of one timer per client: a
 * thousand idle streams cost a few wake-ups per interval, not a thousand. The streams are spread
 * over slots and each tick pings one slot, so every stream still gets one ping per interval but
 * never all at once: a thousand pings in one tick were a thousand socket writes in a row, which
 * stalled every answer in flight once per interval (figures in bench/README.md).
 */
class KeepAliveGroup {
  readonly slots: Set<() => void>[];
  readonly timer: NodeJS.Timeout;
  size = 0;
  private next = 0;

  constructor(intervalMs: number) {
    this.slots = Array.from({ length: keepAliveSlots(intervalMs) }, () => new Set<() => void>());
    this.timer = setInterval(() => this.tick(), intervalMs / this.slots.length);
    this.timer.unref();
  }

  private tick(): void {
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.slots.length;
    for (const ping of slot) ping();
  }
}

const keepAlives = new Map<number, KeepAliveGroup>();

/** A tick at most every 250 ms (and at most 64 slots): a 15 s interval pings 1/60 of the streams per tick. */
export function keepAliveSlots(intervalMs: number): number {
  return Math.max(1, Math.min(64, Math.floor(intervalMs / 250)));
}

function addKeepAlive(intervalMs: number, send: () => void): () => void {
  let group = keepAlives.get(intervalMs);
  if (!group) {
    group = new KeepAliveGroup(intervalMs);
    keepAlives.set(intervalMs, group);
  }
  const owner = group;
  // The emptiest slot, so the pings stay spread however streams come and go.
  const slot = owner.slots.reduce((least, s) => (s.size < least.size ? s : least));
  slot.add(send);
  owner.size++;
  return () => {
    if (!slot.delete(send)) return;
    owner.size--;
    if (owner.size === 0 && keepAlives.get(intervalMs) === owner) {
      clearInterval(owner.timer);
      keepAlives.delete(intervalMs);
    }
  };
}

/** The number of streams each slot of `intervalMs` pings (for tests: spread evenly). */
export function keepAliveSpread(intervalMs: number): number[] {
  return keepAlives.get(intervalMs)?.slots.map((s) => s.size) ?? [];
}

/** Open keep-alive timers (for tests: one per interval in use, whatever the number of streams). */
export function keepAliveTimers(): number {
  return keepAlives.size;
}

export interface SseOptions {
  /** Comment lines sent while idle, so proxies and browsers keep the connection open. */
  heartbeatMs?: number;
  /** Called when the stream ends (client gone, run finished, error) — for connection counts. */
  onClose?: () => void;
  onError?: (error: unknown) => void;
  headers?: Record<string, string>;
}

/**
 * A stream of something other than run events (the user stream) says how each one is framed. An
 * object item's frame is encoded once and shared by every stream that sends the same object.
 */
export interface SseFormat<T> {
  format: (item: T) => string;
}

/**
 * An SSE response over an async source of events. The source gets a signal that aborts when the
 * client disconnects, so its store subscription is dropped at once.
 */
export function sseResponse(source: (signal: AbortSignal) => AsyncIterable<RunEvent>, options?: SseOptions): Response;
export function sseResponse<T extends object>(source: (signal: AbortSignal) => AsyncIterable<T>, options: SseOptions & SseFormat<T>): Response;
export function sseResponse<T extends object>(source: (signal: AbortSignal) => AsyncIterable<T>, options: SseOptions & Partial<SseFormat<T>> = {}): Response {
  const format = options.format ?? (formatEvent as unknown as (item: T) => string);
  const abort = new AbortController();
  let stopKeepAlive: (() => void) | undefined;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    stopKeepAlive?.();
    abort.abort();
    options.onClose?.();
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: string | Uint8Array) => {
        if (!closed) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      };
      // The retry hint also makes the headers go out at once, before the first event exists.
      write('retry: 1000\n\n');
      stopKeepAlive = addKeepAlive(options.heartbeatMs ?? 15_000, () => write(KEEP_ALIVE));
      void (async () => {
        try {
          for await (const event of source(abort.signal)) write(encodedFrame(event, format));
        } catch (error) {
          if (!abort.signal.aborted) {
            options.onError?.(error);
            write(`event: error\ndata: ${JSON.stringify(errorBody(error))}\n\n`);
          }
        }
        if (!closed) {
          finish();
          controller.close();
        }
      })();
    },
    cancel() {
      finish();
    },
  });
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...options.headers,
    },
  });
}

/** Whether the client asked for a stream instead of JSON. */
export function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/event-stream\b/i.test(accept);
}
