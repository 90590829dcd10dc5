import { lineCount } from '../line-count';
import type { ToolCard } from '../run-reducer';
import { ToolOutput } from './ToolOutput';

type CardState = 'denied' | 'error' | 'done' | 'running' | 'asking' | 'pending';

/** A denial by the person is an answer, not a failure: it gets its own state (and no red). */
export function cardState(card: ToolCard): CardState {
  if (card.decision?.behavior === 'deny' && card.decision.source === 'user') return 'denied';
  if (card.result) return card.result.isError ? 'error' : 'done';
  if (card.running) return 'running';
  return card.decision?.behavior === 'ask' ? 'asking' : 'pending';
}

const STATE_WORDS: Record<CardState, string> = { denied: 'denied by you', error: 'error', done: 'done', running: 'running', asking: 'waiting for approval', pending: 'pending' };

/**
 * A tool call: its input, the permission decision and why, and the result. While it waits for
 * approval the request's card (right after it, or the bottom sheet) shows the input and the reason:
 * said once there, they are left out here.
 */
export function ToolCardView({ card }: { card: ToolCard }) {
  const state = cardState(card);
  const questions = card.name === 'AskUserQuestion' ? questionsOf(card.input) : undefined;
  if (state === 'asking' && !questions) {
    return (
      <li className={`tool tool-${state}`} data-tool-call={card.id} data-tool-state={state}>
        <div className="tool-head">
          <strong>{card.name}</strong>
          <span className="tool-state">{STATE_WORDS[state]}</span>
        </div>
      </li>
    );
  }
  return (
    <li className={`tool tool-${state}`} data-tool-call={card.id} data-tool-state={state}>
      <div className="tool-head">
        <strong>{card.name}</strong>
        <span className="tool-state">{STATE_WORDS[state]}</span>
      </div>
      {questions ? <QuestionsSummary questions={questions} answers={card.answers} /> : <pre className="tool-input">{formatInput(card.input)}</pre>}
      {card.decision ? (
        <p className={`decision decision-${state === 'denied' ? 'denied' : card.decision.behavior}`}>
          <b>{state === 'denied' ? 'denied' : card.decision.behavior}</b> — {card.decision.reason}
          {card.decision.rule ? <code> {card.decision.rule}</code> : null}
          <span className="source"> ({card.decision.source})</span>
        </p>
      ) : null}
      {card.result && !(questions && card.answers) ? (
        <ToolOutput
          content={card.result.content}
          label={state === 'denied' ? 'What the agent was told' : `${card.result.isError ? 'Error result' : 'Result'} · ${Math.round(card.result.durationMs)} ms`}
          fileName={`${card.name}-${card.id}.txt`}
          {...(card.result.whole ? { whole: card.result.whole } : {})}
        />
      ) : null}
    </li>
  );
}

interface AskedQuestion {
  question: string;
  header?: string;
}

function questionsOf(input: unknown): AskedQuestion[] | undefined {
  const list = (input as { questions?: unknown } | undefined)?.questions;
  if (!Array.isArray(list)) return undefined;
  const questions = list.filter((q): q is AskedQuestion => !!q && typeof (q as AskedQuestion).question === 'string');
  return questions.length > 0 ? questions : undefined;
}

/** AskUserQuestion as a person reads it: each question and the answer given, no JSON. */
function QuestionsSummary({ questions, answers }: { questions: AskedQuestion[]; answers?: Record<string, string | string[]> }) {
  return (
    <dl className="qa">
      {questions.map((q) => {
        const a = answers?.[q.question];
        return (
          <div key={q.question}>
            <dt>
              {q.header ? <span className="chip">{q.header}</span> : null} {q.question}
            </dt>
            <dd>{a === undefined ? <span className="meta">not answered yet</span> : Array.isArray(a) ? a.join(', ') : a}</dd>
          </div>
        );
      })}
    </dl>
  );
}

function formatInput(input: unknown): string {
  const fields = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  // Edit/Write: the path alone; the change itself is the diff in the approval and the result.
  if (typeof fields['file_path'] === 'string' && (typeof fields['new_string'] === 'string' || typeof fields['content'] === 'string')) {
    const lines = lineCount(String(fields['new_string'] ?? fields['content']));
    return `${fields['file_path']} (${lines} line${lines === 1 ? '' : 's'} of new text)`;
  }
  if (input && typeof input === 'object' && 'command' in input && typeof (input as { command: unknown }).command === 'string') return `$ ${(input as { command: string }).command}`;
  return JSON.stringify(input, null, 2);
}
