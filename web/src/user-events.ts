import { authHeaders } from './api';

export interface UserEvent {
  type: 'run' | 'interaction' | 'resync';
  runId?: string;
  interactionId?: string;
  status?: string;
}

type Listener = (event: UserEvent) => void;
const listeners = new Set<Listener>();
let stop: (() => void) | undefined;

/**
 * One GET /events stream per tab, shared by every page that listens (the server limits streams per
 * user). Reconnects after a drop and then tells listeners to resync, since changes in the gap are lost.
 */
export function onUserEvent(listener: Listener): () => void {
  listeners.add(listener);
  if (!stop) stop = connect();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      stop?.();
      stop = undefined;
    }
  };
}

function connect(): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  let retryMs = 500;
  let first = true;
  const emit = (event: UserEvent) => listeners.forEach((l) => l(event));
  void (async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const res = await fetch('/events', { headers: { ...authHeaders(), accept: 'text/event-stream' }, signal: controller.signal });
        if (res.ok && res.body) {
          if (!first) emit({ type: 'resync' });
          first = false;
          retryMs = 500;
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let cut: number;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              const data = block.split('\n').find((line) => line.startsWith('data:'));
              if (!data) continue;
              try {
                emit(JSON.parse(data.slice(5)) as UserEvent);
              } catch {
                // A frame that is not JSON is not ours to act on.
              }
            }
          }
        }
      } catch {
        if (stopped) return;
      }
      await new Promise((r) => setTimeout(r, retryMs));
      retryMs = Math.min(retryMs * 2, 10_000);
    }
  })();
  return () => {
    stopped = true;
    controller?.abort();
  };
}
