import { useState } from 'react';
import { api, ApiError } from '../api';
import { navigate } from '../router';
import type { RunView } from '../types';

const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];

/** Starts a run; the server validates everything and names the field at fault. */
export function NewRunForm() {
  const [task, setTask] = useState('');
  const [model, setModel] = useState('');
  const [mode, setMode] = useState('default');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="new-run"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const run = await api<RunView>('POST', '/runs', { task, ...(model.trim() ? { model: model.trim() } : {}), permissionMode: mode });
          navigate(`/runs/${encodeURIComponent(run.id)}`);
        } catch (err) {
          setError(err instanceof ApiError && err.field ? `${err.field}: ${err.message}` : (err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label htmlFor="new-task">Task</label>
      <textarea id="new-task" rows={2} value={task} onChange={(e) => setTask(e.target.value)} placeholder="What should the agent do?" required />
      <div className="row">
        <span className="field">
          <label htmlFor="new-model">Model</label>
          <input id="new-model" value={model} onChange={(e) => setModel(e.target.value)} placeholder="server default" />
        </span>
        <span className="field">
          <label htmlFor="new-mode">Permission mode</label>
          <select id="new-mode" value={mode} onChange={(e) => setMode(e.target.value)}>
            {MODES.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </span>
        <button type="submit" className="primary" disabled={busy || !task.trim()}>
          Start run
        </button>
      </div>
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
