import { useEffect, useState } from 'react';
import { ApiError } from './api';
import type { AnswerFields } from './types';

/** The two 503s that mean the server's store (not the request) failed: asking again later is safe. */
export type StoreFaultCode = 'store_unavailable' | 'disk_full';

/** The store fault a failed call reports, if it is one. */
export function storeFaultOf(error: unknown): StoreFaultCode | undefined {
  if (!(error instanceof ApiError) || error.status !== 503) return undefined;
  return error.code === 'store_unavailable' || error.code === 'disk_full' ? error.code : undefined;
}

/** A send the store refused: `back` once /readyz says the store answers (and has room) again. */
export interface StoreFault {
  code: StoreFaultCode;
  back: boolean;
}

/** How often the page asks /readyz while a send waits on the store. */
const READY_POLL_MS = 2_000;

/**
 * The store fault of the last send, if it failed on one. While it lasts the page asks /readyz and
 * marks it `back` when the server is ready; it goes when a later send succeeds or fails otherwise.
 */
export function useStoreFault(initial?: StoreFaultCode): { fault?: StoreFault; failed: (code: StoreFaultCode) => void; clear: () => void } {
  const [fault, setFault] = useState<StoreFault | undefined>(initial ? { code: initial, back: false } : undefined);
  const waiting = fault !== undefined && !fault.back;
  useEffect(() => {
    if (!waiting) return;
    let live = true;
    const timer = setInterval(() => {
      fetch('/readyz')
        .then((res) => {
          if (live && res.ok) setFault((f) => (f ? { ...f, back: true } : f));
        })
        .catch(() => undefined);
    }, READY_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [waiting]);
  return { fault, failed: (code) => setFault({ code, back: false }), clear: () => setFault(undefined) };
}

/**
 * Answers the store refused, by request id, with the fault: kept while the page is open so the
 * card can offer them again even when it is drawn anew (the run re-asks the same request once the
 * store is back). In memory only: an approval is never kept across a reload.
 */
const kept = new Map<string, { answer: AnswerFields; code: StoreFaultCode }>();

export const keptAnswers = {
  get: (requestId: string) => kept.get(requestId),
  set: (requestId: string, answer: AnswerFields, code: StoreFaultCode) => void kept.set(requestId, { answer, code }),
  delete: (requestId: string) => void kept.delete(requestId),
};

const REMEMBER: Record<string, string> = {
  session: 'allow always, for this run',
  local: 'allow always, in this project',
  project: 'allow always, in this project',
  user: 'allow always, for me',
};

/** The kept answer in a few words, so the person sees what "Send again" sends. */
export function describeKeptAnswer(answer: AnswerFields): string {
  if (answer.kind === 'confirm') {
    if (answer.confirmed === false) return answer.message ? `deny, saying “${clip(answer.message)}”` : 'deny';
    if (answer.updatedInput !== undefined) return 'allow your edited version';
    return (answer.remember && REMEMBER[answer.remember]) ?? 'allow once';
  }
  if (answer.kind === 'input') return answer.text ? `“${clip(answer.text)}”` : 'an empty reply';
  if (answer.kind === 'select') return (answer.selected ?? []).map((s) => `“${clip(s)}”`).join(', ') || 'no choice';
  return 'your answers';
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
