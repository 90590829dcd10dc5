import { useEffect, useState } from 'react';
import { api, ApiError } from '../api';
import { navigate } from '../router';
import { storeFaultOf, useStoreFault } from '../store-fault';
import type { Me, RunView } from '../types';
import { StoreFaultBanner } from './StoreFaultBanner';

/** One line on what each mode does, shown under the picker. */
const MODE_HELP: Record<string, string> = {
  default: 'Asks you before anything that is not clearly safe.',
  acceptEdits: 'Edits files in the project without asking; still asks for commands.',
  plan: 'Reads and plans only: no edits, no commands that change anything.',
  dontAsk: 'Never asks: what no rule allows is denied.',
  bypassPermissions: 'Allows everything without asking, deny rules aside.',
};

interface Models {
  defaultModel: string | null;
  scriptedModels: string[];
}

/** Starts a run with what the server offers: its models, its roots and the modes its policy allows. */
export function NewRunForm({ me }: { me: Me }) {
  const [task, setTask] = useState('');
  const [models, setModels] = useState<Models>();
  const [model, setModel] = useState('');
  const [cwd, setCwd] = useState(me.roots[0] ?? '');
  const [mode, setMode] = useState(me.permissionModes.includes('default') ? 'default' : (me.permissionModes[0] ?? 'default'));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<Models>('GET', '/models').then(
      (m) => {
        setModels(m);
        setModel(m.defaultModel ?? '');
      },
      (e: Error) => setError(e.message),
    );
  }, []);
  const store = useStoreFault();
  const choices = models ? [...(models.defaultModel ? [models.defaultModel] : []), ...models.scriptedModels] : [];
  // The form keeps what was typed when the store refuses a start: "Start again" sends it as it is.
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const run = await api<RunView>('POST', '/runs', { task, ...(model ? { model } : {}), ...(cwd ? { cwd } : {}), permissionMode: mode });
      store.clear();
      navigate(`/runs/${encodeURIComponent(run.id)}`);
    } catch (err) {
      const code = storeFaultOf(err);
      if (code) store.failed(code);
      else {
        store.clear();
        setError(err instanceof ApiError && err.field ? `${err.field}: ${err.message}` : (err as Error).message);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="new-run"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <label htmlFor="new-task">Task</label>
      <textarea id="new-task" rows={2} value={task} onChange={(e) => setTask(e.target.value)} placeholder="What should the agent do?" required />
      <div className="row">
        <span className="field">
          <label htmlFor="new-model">Model</label>
          {/* A list of what the server offers, still typeable: another provider's model may be allowed too. */}
          <input id="new-model" list="new-model-choices" value={model} onChange={(e) => setModel(e.target.value)} required aria-describedby="new-model-help" />
          <datalist id="new-model-choices">
            {choices.map((m) => (
              <option key={m} value={m}>
                {m === models?.defaultModel ? 'server default' : 'scripted model file'}
              </option>
            ))}
          </datalist>
          <small id="new-model-help">{models?.defaultModel ? `Server default: ${models.defaultModel}` : 'No server default: name a model, e.g. anthropic:claude-sonnet-4-5'}</small>
        </span>
        {me.roots.length > 0 ? (
          <span className="field">
            <label htmlFor="new-cwd">Working directory</label>
            <select id="new-cwd" value={cwd} onChange={(e) => setCwd(e.target.value)}>
              {me.roots.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </span>
        ) : null}
        <span className="field">
          <label htmlFor="new-mode">Permission mode</label>
          <select id="new-mode" value={mode} onChange={(e) => setMode(e.target.value)} aria-describedby="new-mode-help">
            {me.permissionModes.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </span>
        <button type="submit" className="primary" disabled={busy || !task.trim() || !model}>
          Start run
        </button>
      </div>
      <p id="new-mode-help" className={mode === 'bypassPermissions' ? 'warning' : 'meta'} role={mode === 'bypassPermissions' ? 'alert' : undefined}>
        {mode === 'bypassPermissions' ? 'Warning: ' : ''}
        {MODE_HELP[mode] ?? ''}
      </p>
      {store.fault ? <StoreFaultBanner fault={store.fault} what="run" busy={busy || !task.trim() || !model} onSendAgain={() => void start()} /> : null}
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
