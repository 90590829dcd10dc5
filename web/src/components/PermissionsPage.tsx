import { useState } from 'react';
import { api, ApiError } from '../api';
import { useLive } from '../use-poll';
import type { ProjectRules, RunView } from '../types';

interface Permissions {
  userId: string;
  allow: { rule: string; createdAt: string }[];
  deny: { rule: string; createdAt: string }[];
}

interface SessionRule {
  rule: string;
  toolName: string | null;
  interactionId: string;
  answeredBy: string | null;
  answeredAt: string | null;
}

/** Runs that can still make calls: their "always, this run" rules still apply. */
const ACTIVE = 'running,idle,suspended';

/** The "always, this run" rules of the user's active runs (GET /runs/:id/rules), run by run. */
async function loadSessionRules(userId: string): Promise<{ run: RunView; rules: SessionRule[] }[]> {
  const { runs } = await api<{ runs: RunView[] }>('GET', `/runs?userId=${encodeURIComponent(userId)}&status=${ACTIVE}&limit=50`);
  const withRules = await Promise.all(runs.map(async (run) => ({ run, rules: (await api<{ session: SessionRule[] }>('GET', `/runs/${encodeURIComponent(run.id)}/rules`)).session })));
  return withRules.filter((r) => r.rules.length > 0);
}

/**
 * The project rules (`.sage/settings.local.json`) of the folders the user's recent runs work in,
 * one entry per folder: where "always, this project" answers are saved.
 */
async function loadProjectRules(userId: string): Promise<ProjectRules[]> {
  const { runs } = await api<{ runs: RunView[] }>('GET', `/runs?userId=${encodeURIComponent(userId)}&limit=20`);
  const found = await Promise.all(runs.map((run) => api<{ project?: ProjectRules }>('GET', `/runs/${encodeURIComponent(run.id)}/rules`).then((r) => r.project)));
  const byFolder = new Map<string, ProjectRules>();
  for (const project of found) if (project && !byFolder.has(project.cwd)) byFolder.set(project.cwd, project);
  return [...byFolder.values()];
}

/** The user's remembered allow and deny patterns: add and remove. */
export function PermissionsPage({ userId }: { userId: string }) {
  const base = `/permissions/${encodeURIComponent(userId)}`;
  // An "always" answer saves its rule when the run resumes: reload on the answer and on the run's next status.
  const perms = useLive(() => api<Permissions>('GET', base), [userId], (e) => e.type === 'run' || (e.type === 'interaction' && e.status === 'answered'));
  const session = useLive(() => loadSessionRules(userId), [userId], (e) => e.type === 'run' || (e.type === 'interaction' && e.status === 'answered'));
  const projects = useLive(() => loadProjectRules(userId), [userId], (e) => e.type === 'run' || (e.type === 'interaction' && e.status === 'answered'));
  const [rule, setRule] = useState('');
  const [kind, setKind] = useState<'allow' | 'deny'>('allow');
  const [error, setError] = useState<string>();

  const change = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      perms.reload();
    } catch (e) {
      setError(e instanceof ApiError && e.field ? `${e.field}: ${e.message}` : (e as Error).message);
    }
  };

  return (
    <section>
      <h1>Permissions of {userId}</h1>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void change(async () => {
            await api('POST', `${base}/${kind}`, { rule: rule.trim() });
            setRule('');
          });
        }}
      >
        <span className="field grow">
          <label htmlFor="rule">Pattern</label>
          <input id="rule" value={rule} onChange={(e) => setRule(e.target.value)} placeholder="Bash(npm run test:*)" />
        </span>
        <span className="field">
          <label htmlFor="rule-kind">List</label>
          <select id="rule-kind" value={kind} onChange={(e) => setKind(e.target.value as 'allow' | 'deny')}>
            <option value="allow">allow</option>
            <option value="deny">deny</option>
          </select>
        </span>
        <button type="submit" className="primary" disabled={!rule.trim()}>
          Add
        </button>
      </form>
      {error || perms.error ? (
        <p className="error" role="alert">
          {error ?? perms.error}
        </p>
      ) : null}
      {(['allow', 'deny'] as const).map((list) => (
        <div key={list} className="rule-list">
          <h2>{list === 'allow' ? 'Allowed' : 'Denied'}</h2>
          <ul data-list={list}>
            {perms.data?.[list].map((r) => (
              <li key={r.rule}>
                <code>{r.rule}</code>
                <button type="button" className="link" aria-label={`Remove ${r.rule} from ${list}`} onClick={() => void change(() => api('DELETE', `${base}/${list}/${encodeURIComponent(r.rule)}`))}>
                  Remove
                </button>
              </li>
            ))}
            {perms.data && perms.data[list].length === 0 ? <li className="empty">None.</li> : null}
          </ul>
        </div>
      ))}
      <div className="rule-list">
        <h2>Allowed for one run only</h2>
        <p className="meta">Added by &ldquo;always, this run&rdquo; answers; they end with their run.</p>
        {session.error ? (
          <p className="error" role="alert">
            {session.error}
          </p>
        ) : null}
        <ul data-list="session">
          {session.data?.flatMap(({ run, rules }) =>
            rules.map((r) => (
              <li key={`${run.id}-${r.interactionId}-${r.rule}`}>
                <code>{r.rule}</code>
                <span className="meta">
                  in <a href={`#/runs/${encodeURIComponent(run.id)}`}>{run.task.length > 40 ? `${run.task.slice(0, 39)}…` : run.task}</a>
                  {r.answeredBy ? ` · by ${r.answeredBy}` : ''}
                </span>
              </li>
            )),
          )}
          {session.data && session.data.length === 0 ? <li className="empty">None.</li> : null}
        </ul>
      </div>
      <div className="rule-list">
        <h2>Allowed in a project</h2>
        <p className="meta">Added by &ldquo;always, this project&rdquo; answers to the folder&rsquo;s settings file; they apply to everyone&rsquo;s runs there.</p>
        {projects.error ? (
          <p className="error" role="alert">
            {projects.error}
          </p>
        ) : null}
        <ul data-list="project">
          {projects.data?.flatMap((p) =>
            p.trusted
              ? p.allow.map((rule) => (
                  <li key={`${p.cwd}-${rule}`}>
                    <code>{rule}</code>
                    <span className="meta">
                      in <code className="path">{p.file}</code>
                    </span>
                  </li>
                ))
              : [
                  <li key={p.cwd} className="empty">
                    <code className="path">{p.cwd}</code> is not trusted on the server&rsquo;s host: its project rules do not apply. Trust it there with{' '}
                    <code>sage trust {p.cwd}</code>.
                  </li>,
                ],
          )}
          {projects.data && projects.data.every((p) => p.trusted && p.allow.length === 0) ? <li className="empty">None.</li> : null}
        </ul>
      </div>
    </section>
  );
}
