import type { StoreFault } from '../store-fault';

/** What was refused, in the words the banner uses: "answer" (a request), "message", or "run" (a start). */
export type KeptWhat = 'answer' | 'message' | 'run';

const KEPT: Record<KeptWhat, { noun: string; verb: string; again: string; safe: string }> = {
  answer: { noun: 'your answer was kept', verb: 'send it again', again: 'Send again', safe: ' (safe: an answer is never recorded twice)' },
  message: { noun: 'your message was kept', verb: 'send it again', again: 'Send again', safe: ' (safe: a message is never recorded twice)' },
  run: { noun: 'the run could not start; your task was kept', verb: 'start it again', again: 'Start again', safe: '' },
};

/** The sentence for the fault: what failed, that nothing typed is lost, what to do. */
export function storeFaultText(fault: StoreFault, what: KeptWhat): string {
  const { noun, verb, safe } = KEPT[what];
  if (fault.back) return `The store is back, but nothing was sent yet: ${noun}; ${verb}.`;
  if (fault.code === 'disk_full') return `The server's disk is full, so nothing could be saved: ${noun}; ${verb} once space is freed${safe}.`;
  return `The store is unavailable; ${noun}, ${verb}${safe}.`;
}

/**
 * The banner over a card whose send failed on the server's store: says so in plain words, what
 * will be sent, and offers to send it again. An alert while the store is away; once /readyz says
 * it is back, a calmer status (the send still waits for the person).
 */
export function StoreFaultBanner({ fault, what, summary, busy, onSendAgain }: { fault: StoreFault; what: KeptWhat; summary?: string; busy: boolean; onSendAgain: () => void }) {
  return (
    <div className={`store-fault${fault.back ? ' store-back' : ''}`} role={fault.back ? 'status' : 'alert'} data-store-fault={fault.back ? 'back' : fault.code}>
      <p>
        <strong>{storeFaultText(fault, what)}</strong>
        {summary ? <span className="store-fault-kept"> Kept: {summary}.</span> : null}
      </p>
      <button type="button" className="primary" disabled={busy} onClick={onSendAgain}>
        {KEPT[what].again}
      </button>
    </div>
  );
}
