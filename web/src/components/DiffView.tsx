/**
 * A unified diff as a person reads it: the file path, then each line coloured (added green,
 * removed red) with its old and new line numbers. Markers are in the text too ("+"/"-"), so the
 * meaning never rests on colour alone.
 */
export function DiffView({ diff, path, newFile }: { diff: string; path?: string; newFile?: boolean }) {
  const rows = parseDiff(diff);
  const added = rows.filter((r) => r.type === '+').length;
  const removed = rows.filter((r) => r.type === '-').length;
  return (
    <figure className="diff" aria-label={`Changes to ${path ?? 'the file'}`}>
      <figcaption className="diff-head">
        <code className="diff-path">{path}</code>
        <span className="meta">
          {newFile ? `new file, ${added} line${added === 1 ? '' : 's'}` : `+${added} −${removed}`}
        </span>
      </figcaption>
      <div className="diff-body">
        <table>
          <tbody>
            {rows.map((r, i) =>
              r.type === '@' ? (
                <tr key={i} className="diff-hunk">
                  <td colSpan={3}>{r.text}</td>
                </tr>
              ) : (
                <tr key={i} className={`diff-line diff-${r.type === '+' ? 'add' : r.type === '-' ? 'del' : 'ctx'}`}>
                  <td className="ln" aria-hidden="true">{r.oldNo ?? ''}</td>
                  <td className="ln" aria-hidden="true">{r.newNo ?? ''}</td>
                  <td className="code">
                    <span className="mark">{r.type === ' ' ? ' ' : r.type === '-' ? '−' : '+'}</span>
                    {r.text}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

interface Row {
  type: ' ' | '+' | '-' | '@';
  text: string;
  oldNo?: number;
  newNo?: number;
}

/** Reads `@@ -a,b +c,d @@` hunks; file headers (`---`/`+++`) are left out: the caption names the file. */
export function parseDiff(diff: string): Row[] {
  const rows: Row[] = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      inHunk = true;
      rows.push({ type: '@', text: line });
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith('+')) rows.push({ type: '+', text: line.slice(1), newNo: newNo++ });
    else if (line.startsWith('-')) rows.push({ type: '-', text: line.slice(1), oldNo: oldNo++ });
    else if (line.startsWith(' ')) rows.push({ type: ' ', text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
  }
  return rows;
}
