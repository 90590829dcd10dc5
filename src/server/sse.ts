import type { RunEvent } from '../events/index.js';
import { errorBody } from './error-response.js';

const encoder = new TextEncoder();

/** One SSE frame; the seq is the id so `Last-Event-ID` resumes right after it. JSON never holds a raw newline. */
export function formatEvent(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export interface SseOptions {
  /** Comment lines sent while idle, so proxies and browsers keep the connection open. */
  heartbeatMs?: number;
  /** Called when the stream ends (client gone, run finished, error) — for connection counts. */
  onClose?: () => void;
  onError?: (error: unknown) => void;
  headers?: Record<string, string>;
}

/** A stream of something other than run events (the user stream) says how each one is framed. */
export interface SseFormat<T> {
  format: (item: T) => string;
}

/**
 * An SSE response over an async source of events. The source gets a signal that aborts when the
 * client disconnects, so its store subscription is dropped at once.
 */
export function sseResponse(source: (signal: AbortSignal) => AsyncIterable<RunEvent>, options?: SseOptions): Response;
export function sseResponse<T>(source: (signal: AbortSignal) => AsyncIterable<T>, options: SseOptions & SseFormat<T>): Response;
export function sseResponse<T>(source: (signal: AbortSignal) => AsyncIterable<T>, options: SseOptions & Partial<SseFormat<T>> = {}): Response {
  const format = options.format ?? (formatEvent as unknown as (item: T) => string);
  const abort = new AbortController();
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    abort.abort();
    options.onClose?.();
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      // The retry hint also makes the headers go out at once, before the first event exists.
      write('retry: 1000\n\n');
      heartbeat = setInterval(() => write(': keep-alive\n\n'), options.heartbeatMs ?? 15_000);
      heartbeat.unref();
      void (async () => {
        try {
          for await (const event of source(abort.signal)) write(format(event));
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
