import { useEffect, useState } from 'react';
import type { AnswerFields, InteractionRequestOf } from '../types';

type InputBody = Pick<InteractionRequestOf<'input'>, 'placeholder' | 'multiline' | 'required' | 'defaultValue'>;

/** A text answer; reports undefined while a required answer is empty. */
export function InputField({ id, item, onChange, labelledBy }: { id: string; item: InputBody; onChange: (a: AnswerFields | undefined) => void; labelledBy?: string }) {
  const [text, setText] = useState(item.defaultValue ?? '');
  useEffect(() => onChange(item.required && !text.trim() ? undefined : { kind: 'input', text }), [text]);
  const common = { id, 'aria-labelledby': labelledBy, value: text, placeholder: item.placeholder, 'aria-required': item.required, onChange: (e: { target: { value: string } }) => setText(e.target.value) };
  return item.multiline ? <textarea rows={4} {...common} /> : <input type="text" {...common} />;
}
