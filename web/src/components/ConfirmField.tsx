import { useEffect, useState } from 'react';
import type { AnswerFields } from '../types';

/** A yes/no item inside a combined request. */
export function ConfirmField({ name, confirmText, cancelText, initial, onChange, labelledBy }: { name: string; confirmText?: string; cancelText?: string; initial?: boolean; onChange: (a: AnswerFields | undefined) => void; labelledBy?: string }) {
  // A form's default (an MCP server's boolean `default`) is chosen at first.
  const [value, setValue] = useState<boolean | undefined>(initial);
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
