import { useEffect, useState } from 'react';
import type { AnswerFields } from '../types';

/** A yes/no item inside a combined request. */
export function ConfirmField({ name, confirmText, cancelText, onChange, labelledBy }: { name: string; confirmText?: string; cancelText?: string; onChange: (a: AnswerFields | undefined) => void; labelledBy?: string }) {
  const [value, setValue] = useState<boolean>();
  useEffect(() => onChange(value === undefined ? undefined : { kind: 'confirm', confirmed: value }), [value]);
  return (
    <fieldset className="options inline" aria-labelledby={labelledBy}>
      <label className="option">
        <input type="radio" name={name} checked={value === true} onChange={() => setValue(true)} />
        <span>{confirmText ?? 'Yes'}</span>
      </label>
      <label className="option">
        <input type="radio" name={name} checked={value === false} onChange={() => setValue(false)} />
        <span>{cancelText ?? 'No'}</span>
      </label>
    </fieldset>
  );
}
