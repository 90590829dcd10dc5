import { useState } from 'react';
import type { AnswerFields } from '../types';
import { InputField } from './InputField';
import type { InteractionProps } from './InteractionOverlay';

export function InputInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [answer, setAnswer] = useState<AnswerFields>();
  if (request.kind !== 'input') return null;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (answer) onAnswer(answer);
      }}
    >
      <label htmlFor={`input-${request.id}`} className="visually-hidden">
        {request.title}
      </label>
      <InputField id={`input-${request.id}`} item={request} onChange={setAnswer} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !answer}>
          Submit
        </button>
      </div>
    </form>
  );
}
