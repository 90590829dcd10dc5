import { useState } from 'react';
import type { AnswerFields } from '../types';
import type { InteractionProps } from './InteractionOverlay';
import { QuestionsField } from './QuestionsField';

export function QuestionsInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [answer, setAnswer] = useState<AnswerFields>();
  if (request.kind !== 'questions') return null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (answer) onAnswer(answer);
      }}
    >
      <QuestionsField name={`q-${request.id}`} questions={request.questions} onChange={setAnswer} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !answer}>
          Submit answers
        </button>
      </div>
    </form>
  );
}
