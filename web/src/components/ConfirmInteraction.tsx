import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import type { AnswerFields, InteractionRequestOf, ProjectRules } from '../types';
import { jsonErrorOffset, lineColumn } from '../json-position';
import { reasonLine } from '../../../src/interaction/reason-line.js';
import { DiffView } from './DiffView';
import type { InteractionProps } from './InteractionOverlay';

type Risk = 'LOW' | 'MEDIUM' | 'HIGH' | 'UNKNOWN';

/** What the server put on the confirm (src/loop/approval-preview.ts). */
interface Preview {
  risk?: Risk;
  path?: string;
  diff?: string;
  newFile?: boolean;
  previewError?: string;
}

const RISK_WORDS: Record<Risk, string> = {
  HIGH: 'High risk',
  UNKNOWN: 'Unknown risk',
  MEDIUM: 'Medium risk',
  LOW: 'Low risk',
};

/** Plain words for the person about to say yes to something dangerous. */
const HIGH_WARNING = 'This can delete or overwrite things that are hard to get back, or act outside the project. Read exactly what will run before you allow it.';

export function previewOf(request: InteractionRequestOf<'confirm'>): Preview {
  const m = request.metadata ?? {};
  const risk = typeof m['risk'] === 'string' && ['LOW', 'MEDIUM', 'HIGH', 'UNKNOWN'].includes(m['risk']) ? (m['risk'] as Risk) : undefined;
  return {
    ...(risk ? { risk } : {}),
    ...(typeof m['path'] === 'string' ? { path: m['path'] } : {}),
    ...(typeof m['diff'] === 'string' ? { diff: m['diff'] } : {}),
    ...(m['newFile'] === true ? { newFile: true } : {}),
    ...(typeof m['previewError'] === 'string' ? { previewError: m['previewError'] } : {}),
  };
}

/** UNKNOWN is treated as HIGH, as the gate does. */
export function isHighRisk(request: InteractionRequestOf<'confirm'>): boolean {
  const risk = previewOf(request).risk;
  return risk === 'HIGH' || risk === 'UNKNOWN';
}

const draftKey = (id: string) => `sage.deny-reason.${id}`;

/** The field of the input a person edits as plain text, per tool; anything else is edited as JSON. */
function editableField(toolName: string | undefined, input: unknown): { field: string; label: string } | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const fields = input as Record<string, unknown>;
  if (toolName === 'Bash' && typeof fields['command'] === 'string') return { field: 'command', label: 'Command to run' };
  if (toolName === 'Write' && typeof fields['content'] === 'string') return { field: 'content', label: 'New content of the file' };
  if (toolName === 'Edit' && typeof fields['new_string'] === 'string') return { field: 'new_string', label: 'Replacement text' };
  return undefined;
}

/** The text the edit box shows for `input`: its plain-text field, else the whole input as JSON. */
function editedText(request: InteractionProps['request'], input: unknown): string {
  const plain = request.kind === 'confirm' ? editableField(request.toolName, request.input) : undefined;
  if (plain && input && typeof input === 'object') return String((input as Record<string, unknown>)[plain.field]);
  return JSON.stringify(input, null, 2);
}

/** A JSON.parse error with the line and column it points at, and what was found there. */
export function jsonError(text: string, error: unknown): string {
  const offset = jsonErrorOffset(text);
  const message = error instanceof Error ? error.message : String(error);
  if (offset === undefined) return `Not valid JSON: ${message}`;
  const { line, column } = lineColumn(text, offset);
  const found = offset >= text.length ? 'the text ends too early' : `unexpected ${JSON.stringify(text.slice(offset, offset + 12).split('\n')[0])}`;
  return `Not valid JSON at line ${line}, column ${column}: ${found}.`;
}

/**
 * A permission ask: what will run (command, coloured diff, or input), how risky it is, and the
 * answers — allow once, allow always (scope chosen, exact rules shown), edit then allow, deny with
 * a reason. Keys as in Claude Code's prompt: `y` allows once, `n` denies, a number picks an
 * answer, Escape denies (asking first when a reason is half typed).
 */
export function ConfirmInteraction({ request, busy, onAnswer, kept }: InteractionProps) {
  // A card drawn anew with an answer the store refused shows it as given: the edit, the reason.
  const keptEdit = kept?.kind === 'confirm' && kept.confirmed === true && kept.updatedInput !== undefined ? editedText(request, kept.updatedInput) : undefined;
  const keptReason = kept?.kind === 'confirm' && kept.confirmed === false ? (kept.message ?? '') : undefined;
  const [mode, setMode] = useState<'choose' | 'edit' | 'deny' | 'always'>(() =>
    keptEdit !== undefined ? 'edit' : keptReason !== undefined || (request.kind === 'confirm' && sessionStorage.getItem(draftKey(request.id))) ? 'deny' : 'choose',
  );
  const [edited, setEdited] = useState(keptEdit ?? '');
  const [editError, setEditError] = useState<string>();
  const [reason, setReason] = useState(() => keptReason ?? sessionStorage.getItem(draftKey(request.id)) ?? '');
  const [confirmEscape, setConfirmEscape] = useState(false);
  const box = useRef<HTMLDivElement>(null);

  // A half-typed deny reason survives a refresh; it is dropped once answered.
  useEffect(() => {
    if (mode === 'deny' && reason) sessionStorage.setItem(draftKey(request.id), reason);
    else sessionStorage.removeItem(draftKey(request.id));
  }, [mode, reason, request.id]);

  if (request.kind !== 'confirm') return null;
  const preview = previewOf(request);
  const high = isHighRisk(request);
  // "Always" is never offered for a high-risk call: each one is looked at.
  const rules = high ? [] : (request.suggestions ?? []).filter((s) => s.behavior === 'allow').map((s) => s.rule);
  const hasInput = request.input !== undefined;
  const plain = editableField(request.toolName, request.input);
  const canEdit = hasInput && request.editable !== false;

  const answer = (a: AnswerFields) => {
    if (a.confirmed === false || a.confirmed === true) sessionStorage.removeItem(draftKey(request.id));
    onAnswer(a);
  };
  const allowOnce = () => answer({ kind: 'confirm', confirmed: true, remember: 'once' });
  const denyNow = () => answer({ kind: 'confirm', confirmed: false, ...(reason.trim() ? { message: reason.trim() } : {}) });
  const startEdit = () => {
    setEdited(editedText(request, request.input));
    setEditError(undefined);
    setMode('edit');
  };
  const choices: { label: string; run: () => void }[] = [
    { label: request.confirmText ?? 'Allow once', run: allowOnce },
    ...(rules.length > 0 ? [{ label: 'Allow always…', run: () => setMode('always') }] : []),
    ...(canEdit ? [{ label: 'Edit, then allow…', run: startEdit }] : []),
    { label: request.cancelText ?? 'Deny…', run: () => setMode('deny') },
  ];

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (busy || e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = e.target instanceof HTMLTextAreaElement || (e.target instanceof HTMLInputElement && e.target.type === 'text');
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      if (mode === 'deny' && reason.trim()) setConfirmEscape(true);
      else if (mode === 'edit' || mode === 'always') setMode('choose');
      else denyNow();
      return;
    }
    if (typing || mode !== 'choose') return;
    if (e.key === 'y') {
      e.preventDefault();
      allowOnce();
    } else if (e.key === 'n') {
      e.preventDefault();
      denyNow();
    } else if (/^[1-9]$/.test(e.key) && choices[Number(e.key) - 1]) {
      e.preventDefault();
      choices[Number(e.key) - 1]!.run();
    }
  };

  return (
    // Focusable itself: a high-risk ask focuses this box (not an answer), and its keys still work.
    <div className={`confirm risk-${(preview.risk ?? 'none').toLowerCase()}`} ref={box} tabIndex={-1} onKeyDown={onKeyDown} data-risk={preview.risk ?? 'none'} aria-label={high ? `${RISK_WORDS[preview.risk!]}: ${request.title}` : undefined}>
      {preview.risk ? (
        <p className={`risk risk-${preview.risk.toLowerCase()}`}>
          <span className="risk-label">{RISK_WORDS[preview.risk]}</span>
          {high ? <span className="risk-warning"> — {HIGH_WARNING}</span> : null}
        </p>
      ) : null}
      {request.reason || request.description ? <p className="reason">{reasonLine(request)}</p> : null}
      <WhatWillRun request={request} preview={preview} />

      {mode === 'choose' ? (
        <div className="actions stacked" role="group" aria-label="Your answer">
          {choices.map((c, i) => (
            <button
              type="button"
              key={c.label}
              // A high-risk call gets no primary (blue) Allow: nothing should invite a quick yes.
              className={i === 0 ? (high ? undefined : 'primary') : c.run === choices[choices.length - 1]!.run ? 'danger' : undefined}
              // For a high-risk call no answer has the focus: one Enter must never approve it.
              {...(i === 0 && !high ? { 'data-autofocus': true } : {})}
              disabled={busy}
              onClick={c.run}
            >
              <kbd aria-hidden="true">{i + 1}</kbd> {c.label}
            </button>
          ))}
          <p className="meta keys">Keys: y allow once · n or Esc deny · 1–{choices.length} pick</p>
        </div>
      ) : null}

      {mode === 'always' ? (
        <AlwaysChoice runId={request.runId} rules={rules} busy={busy} onBack={() => setMode('choose')} onPick={(remember) => answer({ kind: 'confirm', confirmed: true, remember })} />
      ) : null}

      {mode === 'edit' ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (plain) return answer({ kind: 'confirm', confirmed: true, updatedInput: { ...(request.input as Record<string, unknown>), [plain.field]: edited } });
            try {
              answer({ kind: 'confirm', confirmed: true, updatedInput: JSON.parse(edited) as unknown });
            } catch (error) {
              setEditError(jsonError(edited, error));
            }
          }}
        >
          <label htmlFor={`edit-${request.id}`}>{plain ? plain.label : 'Input to run (JSON)'}</label>
          <textarea
            id={`edit-${request.id}`}
            className="mono"
            spellCheck={false}
            data-autofocus
            rows={plain?.field === 'command' ? 3 : 10}
            value={edited}
            onChange={(e) => setEdited(e.target.value)}
            autoFocus
            aria-invalid={editError ? true : undefined}
            aria-describedby={editError ? `edit-error-${request.id}` : undefined}
          />
          {editError ? (
            <p className="error" role="alert" id={`edit-error-${request.id}`}>
              {editError}
            </p>
          ) : null}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              Allow edited {plain?.field === 'command' ? 'command' : 'input'}
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
            denyNow();
          }}
        >
          <label htmlFor={`deny-${request.id}`}>Why? (the agent reads this)</label>
          <textarea id={`deny-${request.id}`} rows={3} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus placeholder="e.g. use the staging database instead" />
          {confirmEscape ? (
            <div className="confirm-escape" role="alertdialog" aria-label="Deny now?">
              <p>Deny now, with the reason you typed?</p>
              <div className="actions">
                <button type="button" className="danger" autoFocus disabled={busy} onClick={denyNow}>
                  Deny with this reason
                </button>
                <button
                  type="button"
                  onClick={() => {
                    setConfirmEscape(false);
                    box.current?.querySelector<HTMLTextAreaElement>(`#deny-${CSS.escape(request.id)}`)?.focus();
                  }}
                >
                  Keep typing
                </button>
              </div>
            </div>
          ) : (
            <div className="actions">
              <button type="submit" className="danger" disabled={busy}>
                Deny
              </button>
              <button type="button" onClick={() => setMode('choose')}>
                Back
              </button>
            </div>
          )}
        </form>
      ) : null}
    </div>
  );
}

/** The command, the coloured diff, or (fallback) the JSON input the person approves. */
function WhatWillRun({ request, preview }: { request: InteractionRequestOf<'confirm'>; preview: Preview }) {
  if (request.input === undefined) return null;
  const input = request.input as Record<string, unknown>;
  if (request.toolName === 'Bash' && typeof input['command'] === 'string') {
    return (
      <pre className="tool-input command" aria-label="Command that will run">
        $ {input['command']}
      </pre>
    );
  }
  if (preview.diff !== undefined && (request.toolName === 'Edit' || request.toolName === 'Write')) {
    return preview.diff ? <DiffView diff={preview.diff} path={preview.path} newFile={preview.newFile} /> : <p className="meta">No change: {preview.path} already has this content.</p>;
  }
  return (
    <>
      {preview.path ? (
        <p className="meta">
          File: <code>{preview.path}</code>
          {preview.previewError ? ` — ${preview.previewError}` : null}
        </p>
      ) : null}
      <pre className="tool-input" aria-label="What will run">
        {JSON.stringify(request.input, null, 2)}
      </pre>
    </>
  );
}

/**
 * "Always": the scope, each with the exact rules it saves — this run, this project (the folder's
 * `.sage/settings.local.json`, for everyone's runs there: admins only, in a folder the host trusts;
 * otherwise shown disabled with the server's reason), or me (my per-user rules). A compound
 * command gets one answer that lists every part.
 */
function AlwaysChoice({ runId, rules, busy, onPick, onBack }: { runId: string; rules: string[]; busy: boolean; onPick: (remember: 'session' | 'local' | 'user') => void; onBack: () => void }) {
  const [project, setProject] = useState<ProjectRules | null>();
  useEffect(() => {
    let live = true;
    api<{ project?: ProjectRules }>('GET', `/runs/${encodeURIComponent(runId)}/rules`)
      .then((r) => live && setProject(r.project ?? null))
      // Without the project's state the choice is simply not offered; the other two still work.
      .catch(() => live && setProject(null));
    return () => {
      live = false;
    };
  }, [runId]);
  const list = (
    <ul className="rules">
      {rules.map((r) => (
        <li key={r}>
          <code>{r}</code>
        </li>
      ))}
    </ul>
  );
  return (
    <div className="always" role="group" aria-label="Allow always: choose how long">
      <p>
        Allow {rules.length > 1 ? `these ${rules.length} rules (one per part of the command)` : 'this rule'} without asking again:
      </p>
      {list}
      {rules.some((r) => r.startsWith('Edit(')) ? <p className="meta">An Edit rule covers writes to the same file too (Write rules are read as Edit rules).</p> : null}
      <div className="actions stacked">
        <button type="button" className="primary" data-autofocus autoFocus disabled={busy} onClick={() => onPick('session')}>
          For this run only
        </button>
        {project ? (
          <>
            <button type="button" data-scope="project" disabled={busy || !project.canSave} aria-describedby={`project-scope-${runId}`} onClick={() => onPick('local')}>
              In this project, for everyone&rsquo;s runs
            </button>
            <p className="meta scope-note" id={`project-scope-${runId}`}>
              {project.canSave ? (
                <>
                  Saved to <code className="path">{project.file}</code>
                </>
              ) : (
                project.why
              )}
            </p>
          </>
        ) : null}
        <button type="button" data-scope="user" disabled={busy} onClick={() => onPick('user')}>
          Always, for me (saved to my permissions, used by my new runs)
        </button>
        <button type="button" onClick={onBack}>
          Back
        </button>
      </div>
    </div>
  );
}
