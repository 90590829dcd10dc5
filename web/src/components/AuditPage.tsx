import { api } from '../api';
import { usePoll } from '../use-poll';

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

/** Permission decisions and answers with why they were made, the latest on top. */
export function AuditPage() {
  const audit = usePoll(() => api<{ entries: AuditEntry[] }>('GET', '/audit?limit=1000'), 5_000);
  return (
    <section>
      <h1>Audit</h1>
      {audit.error ? <p className="error">{audit.error}</p> : null}
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
                <td>{new Date(e.at).toLocaleString()}</td>
                <td>{e.userId}</td>
                <td>{e.toolName}</td>
                <td>
                  <span className={`decision-${e.behavior}`}>{typeof e.data?.['answer'] === 'string' ? `answer: ${e.data['answer']}` : e.behavior}</span>
                </td>
                <td>
                  {e.reason}
                  {e.rule ? <code> {e.rule}</code> : null} <span className="source">({e.source})</span>
                  {e.runId ? (
                    <>
                      {' '}
                      <a href={`#/runs/${encodeURIComponent(e.runId)}`}>run</a>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
