import { useEffect, useState } from 'react';
import type { AnswerFields, Question } from '../types';

const OTHER = '\u0000other';

/**
 * AskUserQuestion: 1-4 questions, each with 2-4 described options, single or multi-select, and a
 * free "Other" answer. Answers are keyed by question text, as the tool expects.
 */
export function QuestionsField({ name, questions, onChange, onMissing }: { name: string; questions: Question[]; onChange: (a: AnswerFields | undefined) => void; onMissing?: (why: string | undefined) => void }) {
  const [picked, setPicked] = useState<Record<string, string[]>>({});
  const [other, setOther] = useState<Record<string, string>>({});

  useEffect(() => {
    const answers: Record<string, string | string[]> = {};
    for (const q of questions) {
      const values = (picked[q.question] ?? []).map((v) => (v === OTHER ? (other[q.question] ?? '').trim() : v));
      if (values.length === 0 || values.some((v) => v === '')) {
        // Say why Submit is disabled: the first question still missing an answer.
        onMissing?.(values.length === 0 ? `Answer "${q.header}" to submit.` : `Type your "Other" answer to "${q.header}", or untick Other.`);
        return onChange(undefined);
      }
      answers[q.question] = q.multiSelect ? values : values[0]!;
    }
    onMissing?.(undefined);
    onChange({ kind: 'questions', answers });
  }, [picked, other]);

  const toggle = (q: Question, value: string) =>
    setPicked((prev) => {
      const current = prev[q.question] ?? [];
      const next = q.multiSelect ? (current.includes(value) ? current.filter((v) => v !== value) : [...current, value]) : [value];
      return { ...prev, [q.question]: next };
    });

  return (
    <div className="questions">
      {questions.map((q, qi) => {
        const chosen = picked[q.question] ?? [];
        const group = `${name}-${qi}`;
        return (
          <fieldset key={q.question} className="question">
            <legend>
              <span className="chip">{q.header}</span> {q.question}
              {q.multiSelect ? <small> (pick any)</small> : null}
            </legend>
            {q.options.map((o) => (
              <label key={o.label} className="option">
                <input type={q.multiSelect ? 'checkbox' : 'radio'} name={group} checked={chosen.includes(o.label)} onChange={() => toggle(q, o.label)} />
                <span>
                  <strong>{o.label}</strong>
                  {o.description ? <small>{o.description}</small> : null}
                </span>
              </label>
            ))}
            <label className="option other">
              <input type={q.multiSelect ? 'checkbox' : 'radio'} name={group} checked={chosen.includes(OTHER)} onChange={() => toggle(q, OTHER)} aria-label={`Other answer to: ${q.question}`} />
              <span>
                <strong>Other</strong>
                <input
                  type="text"
                  aria-label={`Your own answer to: ${q.question}`}
                  value={other[q.question] ?? ''}
                  placeholder="Type your own answer"
                  // Focusing the field (Tab, tap) selects nothing; typing an answer picks Other.
                  onChange={(e) => {
                    const value = e.target.value;
                    setOther((prev) => ({ ...prev, [q.question]: value }));
                    if (value.trim() !== '' && !chosen.includes(OTHER)) toggle(q, OTHER);
                  }}
                />
              </span>
            </label>
          </fieldset>
        );
      })}
    </div>
  );
}
