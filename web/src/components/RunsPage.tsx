import { api } from '../api';
import { usePoll } from '../use-poll';
import { runStatusLabel } from '../run-status';
import type { RunView } from '../types';
import { NewRunForm } from './NewRunForm';
import { StatusBadge } from './StatusBadge';

/** The caller's runs (an admin's: everyone's), refreshed every two seconds. */
export function RunsPage() {
  const runs = usePoll(() => api<{ runs: RunView[] }>('GET', '/runs?limit=50'), 2_000);
  return (
    <section>
      <h1>Runs</h1>
      <NewRunForm />
      {runs.error ? <p className="error">{runs.error}</p> : null}
      <ul className="run-list">
        {runs.data?.runs.map((run) => (
          <li key={run.id}>
            <a href={`#/runs/${encodeURIComponent(run.id)}`} data-run-id={run.id}>
              <StatusBadge {...runStatusLabel(run)} />
              <span className="task">{run.task}</span>
              <span className="meta">
                {run.userId} · {new Date(run.createdAt).toLocaleString()}
              </span>
            </a>
          </li>
        ))}
        {runs.data && runs.data.runs.length === 0 ? <li className="empty">No runs yet.</li> : null}
      </ul>
    </section>
  );
}
