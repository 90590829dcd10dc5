import type { ToolCard } from '../run-reducer';

/** A tool call: its input, the permission decision and why, and the result (collapsed). */
export function ToolCardView({ card }: { card: ToolCard }) {
  const state = card.result ? (card.result.isError ? 'error' : 'done') : card.running ? 'running' : card.decision?.behavior === 'ask' ? 'asking' : 'pending';
  return (
    <li className={`tool tool-${state}`} data-tool-call={card.id} data-tool-state={state}>
      <div className="tool-head">
        <strong>{card.name}</strong>
        <span className="tool-state">{state}</span>
      </div>
      <pre className="tool-input">{formatInput(card.input)}</pre>
      {card.decision ? (
        <p className={`decision decision-${card.decision.behavior}`}>
          <b>{card.decision.behavior}</b> — {card.decision.reason}
          {card.decision.rule ? <code> {card.decision.rule}</code> : null}
          <span className="source"> ({card.decision.source})</span>
        </p>
      ) : null}
      {card.result ? (
        <details className="tool-result">
          <summary>
            {card.result.isError ? 'Error result' : 'Result'} · {Math.round(card.result.durationMs)} ms
          </summary>
          <pre>{card.result.content}</pre>
        </details>
      ) : null}
    </li>
  );
}

function formatInput(input: unknown): string {
  if (input && typeof input === 'object' && 'command' in input && typeof (input as { command: unknown }).command === 'string') return `$ ${(input as { command: string }).command}`;
  return JSON.stringify(input, null, 2);
}
