import { useState } from 'react';
import type { AnswerFields } from '../types';
import type { InteractionProps } from './InteractionOverlay';
import { SelectField } from './SelectField';

export function SelectInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [answer, setAnswer] = useState<AnswerFields>();
  if (request.kind !== 'select') return null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (answer) onAnswer(answer);
      }}
    >
      <SelectField name={`select-${request.id}`} item={request} onChange={setAnswer} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !answer}>
          Submit
        </button>
      </div>
    </form>
  );
}
