import { useState } from 'react';
import type { AnswerFields } from '../types';
import type { InteractionProps } from './InteractionOverlay';
import { QuestionsField } from './QuestionsField';

export function QuestionsInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [answer, setAnswer] = useState<AnswerFields>();
  const [missing, setMissing] = useState<string>();
  if (request.kind !== 'questions') return null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (answer) onAnswer(answer);
      }}
    >
      <QuestionsField name={`q-${request.id}`} questions={request.questions} onChange={setAnswer} onMissing={setMissing} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !answer} aria-describedby={!answer && missing ? `why-${request.id}` : undefined}>
          Submit answers
        </button>
        {!answer && missing ? (
          <span className="meta why-disabled" id={`why-${request.id}`}>
            {missing}
          </span>
        ) : null}
      </div>
    </form>
  );
}
