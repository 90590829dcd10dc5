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
 * thousand idle streams cost one wake-up per interval, not a thousand.
 */
const keepAlives = new Map<number, { timer: NodeJS.Timeout; streams: Set<() => void> }>();

function addKeepAlive(intervalMs: number, send: () => void): () => void {
  let group = keepAlives.get(intervalMs);
  if (!group) {
    const streams = new Set<() => void>();
    const timer = setInterval(() => {
      for (const ping of streams) ping();
    }, intervalMs);
    timer.unref();
    group = { timer, streams };
    keepAlives.set(intervalMs, group);
  }
  const { streams, timer } = group;
  streams.add(send);
  return () => {
    streams.delete(send);
    if (streams.size === 0 && keepAlives.get(intervalMs)?.timer === timer) {
      clearInterval(timer);
      keepAlives.delete(intervalMs);
    }
  };
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
