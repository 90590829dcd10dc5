import { useState } from 'react';
import type { AnswerFields, CombinedItem } from '../types';
import { ConfirmField } from './ConfirmField';
import { InputField } from './InputField';
import type { InteractionProps } from './InteractionOverlay';
import { QuestionsField } from './QuestionsField';
import { SelectField } from './SelectField';

/** Several requests answered at once, with one submit; each item's answer is keyed by its key. */
export function CombinedInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [answers, setAnswers] = useState<Record<string, AnswerFields | undefined>>({});
  if (request.kind !== 'combined') return null;
  const complete = request.items.every((item) => answers[item.key] !== undefined);
  const set = (key: string) => (answer: AnswerFields | undefined) => setAnswers((prev) => (prev[key] === answer ? prev : { ...prev, [key]: answer }));
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (complete) onAnswer({ kind: 'combined', responses: answers as Record<string, AnswerFields> });
      }}
    >
      {request.items.map((item) => (
        <section key={item.key} className="combined-item">
          <h3 id={`item-${request.id}-${item.key}`}>{item.title}</h3>
          <ItemField item={item} id={`item-${request.id}-${item.key}-field`} labelledBy={`item-${request.id}-${item.key}`} onChange={set(item.key)} />
        </section>
      ))}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !complete}>
          Submit
        </button>
      </div>
    </form>
  );
}

function ItemField({ item, id, labelledBy, onChange }: { item: CombinedItem; id: string; labelledBy: string; onChange: (a: AnswerFields | undefined) => void }) {
  switch (item.kind) {
    case 'input':
      return <InputField id={id} item={item} labelledBy={labelledBy} onChange={onChange} />;
    case 'select':
      return <SelectField name={id} item={item} labelledBy={labelledBy} onChange={onChange} />;
    case 'confirm':
      return <ConfirmField name={id} confirmText={item.confirmText} cancelText={item.cancelText} labelledBy={labelledBy} onChange={onChange} />;
    case 'questions':
      return <QuestionsField name={id} questions={item.questions} onChange={onChange} />;
  }
}
