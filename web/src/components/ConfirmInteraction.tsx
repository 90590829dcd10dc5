import { useState } from 'react';
import type { AnswerFields, PermissionSuggestion } from '../types';
import type { InteractionProps } from './InteractionOverlay';

const REMEMBER: Record<PermissionSuggestion['destination'], NonNullable<AnswerFields['remember']>> = {
  session: 'session',
  localSettings: 'local',
  projectSettings: 'project',
  userSettings: 'user',
};

const WHERE: Record<PermissionSuggestion['destination'], string> = {
  session: 'for this session',
  localSettings: 'in local settings',
  projectSettings: 'for this project',
  userSettings: 'for you everywhere',
};

/**
 * A permission ask: allow once, allow always with a suggested rule, edit the input then allow, or
 * deny with a reason that is passed on to the model.
 */
export function ConfirmInteraction({ request, busy, onAnswer }: InteractionProps) {
  const [mode, setMode] = useState<'choose' | 'edit' | 'deny'>('choose');
  const [edited, setEdited] = useState('');
  const [editError, setEditError] = useState<string>();
  const [reason, setReason] = useState('');
  if (request.kind !== 'confirm') return null;
  const suggestions = (request.suggestions ?? []).filter((s) => s.behavior === 'allow');
  const hasInput = request.input !== undefined;

  return (
    <div className="confirm">
      {request.reason || request.description ? <p className="reason">{request.reason ?? request.description}</p> : null}
      {hasInput ? (
        <pre className="tool-input" aria-label="What will run">
          {JSON.stringify(request.input, null, 2)}
        </pre>
      ) : null}

      {mode === 'choose' ? (
        <div className="actions stacked">
          <button type="button" className="primary" data-autofocus disabled={busy} onClick={() => onAnswer({ kind: 'confirm', confirmed: true, remember: 'once' })}>
            {request.confirmText ?? 'Allow once'}
          </button>
          {suggestions.map((s) => (
            <button type="button" key={`${s.destination}-${s.rule}`} disabled={busy} onClick={() => onAnswer({ kind: 'confirm', confirmed: true, remember: REMEMBER[s.destination], rule: s.rule })}>
              Allow always <code>{s.rule}</code> {WHERE[s.destination]}
            </button>
          ))}
          {hasInput && request.editable !== false ? (
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setEdited(JSON.stringify(request.input, null, 2));
                setMode('edit');
              }}
            >
              Edit, then allow
            </button>
          ) : null}
          <button type="button" className="danger" disabled={busy} onClick={() => setMode('deny')}>
            {request.cancelText ?? 'Deny…'}
          </button>
        </div>
      ) : null}

      {mode === 'edit' ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            try {
              onAnswer({ kind: 'confirm', confirmed: true, updatedInput: JSON.parse(edited) as unknown });
            } catch {
              setEditError('The input must be valid JSON.');
            }
          }}
        >
          <label htmlFor={`edit-${request.id}`}>Input to run (JSON)</label>
          <textarea id={`edit-${request.id}`} data-autofocus rows={8} value={edited} onChange={(e) => setEdited(e.target.value)} autoFocus />
          {editError ? (
            <p className="error" role="alert">
              {editError}
            </p>
          ) : null}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              Allow edited input
            </button>
            <button type="button" onClick={() => setMode('choose')}>
              Back
            </button>
          </div>
        </form>
      ) : null}

      {mode === 'deny' ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onAnswer({ kind: 'confirm', confirmed: false, ...(reason.trim() ? { message: reason.trim() } : {}) });
          }}
        >
          <label htmlFor={`deny-${request.id}`}>Why? (the agent reads this)</label>
          <textarea id={`deny-${request.id}`} rows={3} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus placeholder="e.g. use the staging database instead" />
          <div className="actions">
            <button type="submit" className="danger" disabled={busy}>
              Deny
            </button>
            <button type="button" onClick={() => setMode('choose')}>
              Back
            </button>
          </div>
        </form>
      ) : null}
    </div>
  );
}
