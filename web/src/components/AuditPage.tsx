import { useState } from 'react';
import { api, authHeaders } from '../api';
import { useLive } from '../use-poll';

interface AuditEntry {
  at: string;
  runId: string | null;
  userId: string | null;
  toolName: string | null;
  behavior: 'allow' | 'deny' | 'ask';
  reason: string;
  source: string;
  rule: string | null;
  data: Record<string, unknown> | null;
}

interface Filters {
  runId: string;
  userId: string;
  decision: '' | 'allow' | 'deny' | 'ask';
  since: string;
  until: string;
}

const EMPTY: Filters = { runId: '', userId: '', decision: '', since: '', until: '' };

/** The query string for the filters; dates are whole days in the browser's time zone. */
function queryOf(f: Filters): string {
  const q = new URLSearchParams({ limit: '1000' });
  if (f.runId.trim()) q.set('runId', f.runId.trim());
  if (f.userId.trim()) q.set('userId', f.userId.trim());
  if (f.decision) q.set('decision', f.decision);
  if (f.since) q.set('since', new Date(`${f.since}T00:00:00`).toISOString());
  if (f.until) q.set('until', new Date(new Date(`${f.until}T00:00:00`).getTime() + 86_400_000).toISOString());
  return q.toString();
}

/** The extra facts an entry may carry, in words: the answer, what was remembered, edits, who answered. */
function details(data: Record<string, unknown> | null): string[] {
  if (!data) return [];
  const out: string[] = [];
  const str = (k: string) => (typeof data[k] === 'string' ? (data[k] as string) : undefined);
  if (str('answer')) out.push(`answer: ${str('answer')}`);
  if (str('remember') && str('remember') !== 'once') out.push(`remembered: ${str('remember')}`);
  if (str('mode')) out.push(`mode: ${str('mode')}`);
  if (str('answeredBy')) out.push(`by ${str('answeredBy')}`);
  if (str('channel')) out.push(`via ${str('channel')}`);
  if (str('message')) out.push(`said: ${str('message')}`);
  if (data['updatedInput'] !== undefined) out.push(`edited input: ${JSON.stringify(data['updatedInput'])}`);
  if (data['answers'] !== undefined) out.push(`answers: ${JSON.stringify(data['answers'])}`);
  return out;
}

/** Saves the filtered log as a file; fetched with the token, which a plain link could not send. */
async function download(query: string, format: 'csv' | 'json'): Promise<void> {
  const res = await fetch(`/audit?${query}&format=${format}`, { headers: authHeaders() });
  if (!res.ok) throw new Error(`Export failed: HTTP ${res.status}`);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = `sage-audit.${format}`;
  a.click();
  URL.revokeObjectURL(url);
}

/** Permission decisions and answers with why they were made, the latest on top; filters and export. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [exportError, setExportError] = useState<string>();
  const query = queryOf(filters);
  const audit = useLive(() => api<{ entries: AuditEntry[] }>('GET', `/audit?${query}`), [query], (e) => e.type === 'interaction' || e.type === 'run');
  const set = (key: keyof Filters) => (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value });
  return (
    <section>
      <h1>Audit</h1>
      <form
        className="row audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <span className="field">
          <label htmlFor="audit-run">Run</label>
          <input id="audit-run" value={draft.runId} onChange={set('runId')} placeholder="run id" />
        </span>
        <span className="field">
          <label htmlFor="audit-user">User</label>
          <input id="audit-user" value={draft.userId} onChange={set('userId')} placeholder="user id" />
        </span>
        <span className="field">
          <label htmlFor="audit-decision">Decision</label>
          <select id="audit-decision" value={draft.decision} onChange={set('decision')}>
            <option value="">any</option>
            <option value="allow">allow</option>
            <option value="deny">deny</option>
            <option value="ask">ask</option>
          </select>
        </span>
        <span className="field">
          <label htmlFor="audit-since">From</label>
          <input id="audit-since" type="date" value={draft.since} onChange={set('since')} />
        </span>
        <span className="field">
          <label htmlFor="audit-until">To</label>
          <input id="audit-until" type="date" value={draft.until} onChange={set('until')} />
        </span>
        <button type="submit" className="primary">
          Filter
        </button>
        <button type="button" onClick={() => download(query, 'csv').catch((e: Error) => setExportError(e.message))}>
          Export CSV
        </button>
        <button type="button" onClick={() => download(query, 'json').catch((e: Error) => setExportError(e.message))}>
          Export JSON
        </button>
      </form>
      {audit.error || exportError ? (
        <p className="error" role="alert">
          {audit.error ?? exportError}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">User</th>
              <th scope="col">Tool</th>
              <th scope="col">Decision</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {[...(audit.data?.entries ?? [])].reverse().map((e, i) => (
              <tr key={`${e.at}-${i}`}>
                <td data-label="When">{new Date(e.at).toLocaleString()}</td>
                <td data-label="User">{e.userId}</td>
                <td data-label="Tool">{e.toolName}</td>
                <td data-label="Decision">
                  <span className={`decision-${e.behavior}`}>{e.behavior}</span>
                </td>
                <td data-label="Why">
                  {/* One block, so a stacked row on a phone keeps it in one grid cell. */}
                  <div>
                    {e.reason}
                    {e.rule ? <code> {e.rule}</code> : null} <span className="source">({e.source})</span>
                    {details(e.data).map((d) => (
                      <span key={d} className="audit-detail">
                        {d}
                      </span>
                    ))}
                    {e.runId ? (
                      <>
                        {' '}
                        <a href={`#/runs/${encodeURIComponent(e.runId)}`}>run</a>
                      </>
                    ) : null}
                  </div>
                </td>
              </tr>
            ))}
            {audit.data && audit.data.entries.length === 0 ? (
              <tr>
                <td colSpan={5} className="empty">
                  No entries match.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
    </section>
  );
}
