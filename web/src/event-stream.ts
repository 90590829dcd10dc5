import { runEventSchema } from '../../src/events/run-event.js';
import { authHeaders } from './api';
import type { RunEvent } from './types';

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'error';

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/**
 * Follows a run's events over SSE. Uses fetch rather than EventSource so it can send the bearer
 * token; on a dropped connection it reconnects with `Last-Event-ID` set to the last seq it saw,
 * so nothing is missed and nothing is delivered twice. Returns a stop function.
 */
export function watchRun(runId: string, onEvent: (event: RunEvent) => void, onStatus: (status: StreamStatus, detail?: string) => void): () => void {
  let lastSeq = 0;
  let finished = false;
  let stopped = false;
  let controller: AbortController | undefined;
  let retryMs = 250;

  const connect = async (): Promise<void> => {
    while (!stopped && !finished) {
      controller = new AbortController();
      onStatus(lastSeq === 0 ? 'connecting' : 'reconnecting');
      try {
        const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
        if (lastSeq > 0) headers['last-event-id'] = String(lastSeq);
        const res = await fetch(`/runs/${encodeURIComponent(runId)}/events`, { headers, signal: controller.signal });
        if (!res.ok || !res.body) {
          const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
          // 4xx will not get better by retrying (gone, forbidden, bad token).
          if (res.status >= 400 && res.status < 500) {
            onStatus('error', body?.error?.message ?? `HTTP ${res.status}`);
            return;
          }
          throw new Error(`HTTP ${res.status}`);
        }
        onStatus('live');
        retryMs = 250;
        await readFrames(res.body, (event) => {
          if (event.seq <= lastSeq) return;
          lastSeq = event.seq;
          if (TERMINAL.has(event.type)) finished = true;
          onEvent(event);
        });
        // The server ends the stream after a finished run's last event, or when it shuts down.
        if (finished) {
          onStatus('ended');
          return;
        }
      } catch {
        if (stopped) return;
      }
      await new Promise((r) => setTimeout(r, retryMs));
      retryMs = Math.min(retryMs * 2, 5_000);
    }
  };
  void connect();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

async function readFrames(body: ReadableStream<Uint8Array>, onEvent: (event: RunEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data || !/^id:/m.test(block)) continue;
      const parsed = runEventSchema.safeParse(JSON.parse(data));
      if (parsed.success) onEvent(parsed.data as RunEvent);
    }
  }
}
