import { useState } from 'react';
import { api } from '../api';
import { useLive } from '../use-poll';
import { runStatusLabel } from '../run-status';
import type { Me, RunView } from '../types';
import { NewRunForm } from './NewRunForm';
import { StatusBadge } from './StatusBadge';

const FILTERS = [
  ['all', 'All'],
  ['running', 'Running'],
  ['waiting', 'Waiting for approval'],
  ['idle', 'Idle'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
] as const;

/** The caller's runs (an admin's: everyone's), live over the user stream. */
export function RunsPage({ me }: { me: Me }) {
  const runs = useLive(() => api<{ runs: RunView[] }>('GET', '/runs?limit=200'), [], (e) => e.type === 'run' || e.type === 'interaction');
  const [filter, setFilter] = useState<(typeof FILTERS)[number][0]>('all');
  const [search, setSearch] = useState('');
  const needle = search.trim().toLowerCase();
  const shown = (runs.data?.runs ?? []).filter((run) => {
    const { status } = runStatusLabel(run);
    const matches = filter === 'all' || status === filter || (filter === 'failed' && status === 'max_steps');
    return matches && (!needle || run.task.toLowerCase().includes(needle) || run.id.toLowerCase().includes(needle) || run.userId.toLowerCase().includes(needle));
  });
  return (
    <section>
      <h1>Runs</h1>
      <NewRunForm me={me} />
      <div className="row list-tools">
        <span className="field grow">
          <label htmlFor="run-search">Search</label>
          <input id="run-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Task, run id or user" />
        </span>
        <span className="field">
          <label htmlFor="run-filter">Status</label>
          <select id="run-filter" value={filter} onChange={(e) => setFilter(e.target.value as typeof filter)}>
            {FILTERS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </span>
      </div>
      {runs.error ? <p className="error">{runs.error}</p> : null}
      <ul className="run-list">
        {shown.map((run) => (
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
        {runs.data && shown.length === 0 ? <li className="empty">{runs.data.runs.length === 0 ? 'No runs yet.' : 'No run matches.'}</li> : null}
      </ul>
    </section>
  );
}
