import { useState } from 'react';

/** Results this short are shown open; longer ones start collapsed, with the first page. */
const SHORT_LINES = 15;
const SHORT_CHARS = 2_000;
const PAGE_LINES = 200;

/**
 * A tool's output: short results open, long ones paged (200 lines a page) with "Show all", plus
 * copy and download of the whole text, so nothing is ever cut off without a way to see it.
 */
export function ToolOutput({ content, label, fileName }: { content: string; label: string; fileName: string }) {
  const lines = content.split('\n');
  const short = lines.length <= SHORT_LINES && content.length <= SHORT_CHARS;
  const [page, setPage] = useState(0);
  const [all, setAll] = useState(false);
  const [copied, setCopied] = useState<string>();
  const pages = Math.ceil(lines.length / PAGE_LINES);
  const shown = short || all ? content : lines.slice(page * PAGE_LINES, (page + 1) * PAGE_LINES).join('\n');

  const copy = () => {
    navigator.clipboard
      .writeText(content)
      .then(() => setCopied('Copied.'))
      .catch(() => setCopied('Copy was refused by the browser; use Download.'));
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([content], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = fileName;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1_000);
  };
  const tools = (
    <div className="output-tools">
      <button type="button" className="small" onClick={copy}>
        Copy
      </button>
      <button type="button" className="small" onClick={download}>
        Download
      </button>
      {copied ? <span className="meta" role="status">{copied}</span> : null}
    </div>
  );

  if (short) {
    return (
      <div className="tool-result open" data-output="short">
        <div className="output-head">
          <span className="meta">{label}</span>
          {tools}
        </div>
        <pre>{content}</pre>
      </div>
    );
  }
  return (
    <details className="tool-result" data-output="long">
      <summary>
        {label} · {lines.length.toLocaleString('en')} lines
      </summary>
      {tools}
      <pre className={all ? 'output-all' : undefined}>{shown}</pre>
      <div className="output-pager">
        {!all ? (
          <>
            <button type="button" className="small" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Previous page
            </button>
            <span className="meta">
              Lines {page * PAGE_LINES + 1}–{Math.min((page + 1) * PAGE_LINES, lines.length)} of {lines.length}
            </span>
            <button type="button" className="small" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
              Next page
            </button>
          </>
        ) : null}
        <button type="button" className="small" onClick={() => setAll(!all)}>
          {all ? 'Show pages' : `Show all ${lines.length.toLocaleString('en')} lines`}
        </button>
      </div>
    </details>
  );
}
