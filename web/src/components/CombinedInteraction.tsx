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
  // A questions item says precisely what it still misses ("Type your Other answer…").
  const [itemWhy, setItemWhy] = useState<Record<string, string | undefined>>({});
  if (request.kind !== 'combined') return null;
  // An optional item (a form field the server does not require) may stay unanswered.
  const complete = request.items.every((item) => item.optional || answers[item.key] !== undefined);
  // Say why Submit is disabled: the first item still without an answer.
  const firstMissing = request.items.find((item) => !item.optional && answers[item.key] === undefined);
  const why = firstMissing ? (itemWhy[firstMissing.key] ?? `Answer "${firstMissing.title}" to submit.`) : undefined;
  const whyId = `why-${request.id}`;
  const set = (key: string) => (answer: AnswerFields | undefined) => setAnswers((prev) => (prev[key] === answer ? prev : { ...prev, [key]: answer }));
  const setWhy = (key: string) => (text: string | undefined) => setItemWhy((prev) => (prev[key] === text ? prev : { ...prev, [key]: text }));
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (complete) onAnswer({ kind: 'combined', responses: Object.fromEntries(Object.entries(answers).filter((e): e is [string, AnswerFields] => e[1] !== undefined)) });
      }}
    >
      {request.items.map((item) => (
        <section key={item.key} className="combined-item">
          <h3 id={`item-${request.id}-${item.key}`}>{item.title}</h3>
          <ItemField item={item} id={`item-${request.id}-${item.key}-field`} labelledBy={`item-${request.id}-${item.key}`} onChange={set(item.key)} onMissing={setWhy(item.key)} />
        </section>
      ))}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !complete} aria-describedby={why ? whyId : undefined}>
          Submit
        </button>
        {why ? (
          <span className="meta why-disabled" id={whyId}>
            {why}
          </span>
        ) : null}
      </div>
    </form>
  );
}

function ItemField({ item, id, labelledBy, onChange, onMissing }: { item: CombinedItem; id: string; labelledBy: string; onChange: (a: AnswerFields | undefined) => void; onMissing: (why: string | undefined) => void }) {
  switch (item.kind) {
    case 'input':
      return <InputField id={id} item={item} labelledBy={labelledBy} onChange={onChange} />;
    case 'select':
      return <SelectField name={id} item={item} labelledBy={labelledBy} onChange={onChange} />;
    case 'confirm':
      return <ConfirmField name={id} confirmText={item.confirmText} cancelText={item.cancelText} initial={item.defaultConfirmed} labelledBy={labelledBy} onChange={onChange} />;
    case 'questions':
      return <QuestionsField name={id} questions={item.questions} onChange={onChange} onMissing={onMissing} />;
  }
}
