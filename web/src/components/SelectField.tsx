import { useEffect, useState } from 'react';
import type { AnswerFields, InteractionRequestOf } from '../types';

type SelectBody = Pick<InteractionRequestOf<'select'>, 'options' | 'multiple' | 'defaultSelected'>;

/** Radio buttons, or checkboxes when several may be picked; each option shows its description. */
export function SelectField({ name, item, onChange, labelledBy }: { name: string; item: SelectBody; onChange: (a: AnswerFields | undefined) => void; labelledBy?: string }) {
  // The form's default (an MCP server's `default`) is chosen at first.
  const [selected, setSelected] = useState<string[]>(item.defaultSelected ?? []);
  useEffect(() => onChange(selected.length > 0 ? { kind: 'select', selected } : undefined), [selected]);
  return (
    <fieldset className="options" aria-labelledby={labelledBy}>
      {item.options.map((option) => (
        <label key={option.value} className="option">
          <input
            type={item.multiple ? 'checkbox' : 'radio'}
            name={name}
            value={option.value}
            checked={selected.includes(option.value)}
            onChange={() => setSelected((prev) => (item.multiple ? (prev.includes(option.value) ? prev.filter((v) => v !== option.value) : [...prev, option.value]) : [option.value]))}
          />
          <span>
            <strong>{option.label}</strong>
            {option.description ? <small>{option.description}</small> : null}
          </span>
        </label>
      ))}
    </fieldset>
  );
}
