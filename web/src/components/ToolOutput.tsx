import { useRef, useState } from 'react';
import { authHeaders } from '../api';

/** Results this short are shown open; longer ones start collapsed, with the first page. */
const SHORT_LINES = 15;
const SHORT_CHARS = 2_000;
const PAGE_LINES = 200;

/** Where the whole text of an output the agent got cut is (GET /runs/:id/tool-calls/:callId/output). */
export interface WholeOutput {
  url: string;
  chars: number;
}

/**
 * A tool's output: short results open, long ones paged (200 lines a page) with "Show all", plus
 * copy and download of the whole text, so nothing is ever cut off without a way to see it. When the
 * agent was given a cut copy (`whole`), the whole text is fetched from the server on demand — for
 * showing, copying and downloading — and the card says the agent saw less.
 */
export function ToolOutput({ content, label, fileName, whole }: { content: string; label: string; fileName: string; whole?: WholeOutput }) {
  const [fullText, setFullText] = useState<string>();
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string>();
  const inFlight = useRef<Promise<string> | undefined>(undefined);
  const text = fullText ?? content;
  const lines = text.split('\n');
  const short = !whole && lines.length <= SHORT_LINES && text.length <= SHORT_CHARS;
  const [page, setPage] = useState(0);
  const [all, setAll] = useState(false);
  const [copied, setCopied] = useState<string>();
  const pages = Math.ceil(lines.length / PAGE_LINES);
  const shown = short || all ? text : lines.slice(page * PAGE_LINES, (page + 1) * PAGE_LINES).join('\n');

  /** The whole text: the agent's copy when nothing was cut, else fetched once from the server. */
  const wholeText = (): Promise<string> => {
    if (!whole) return Promise.resolve(content);
    if (fullText !== undefined) return Promise.resolve(fullText);
    inFlight.current ??= (async () => {
      setLoading(true);
      setLoadError(undefined);
      try {
        const res = await fetch(whole.url, { headers: authHeaders() });
        if (!res.ok) throw new Error(`the server answered ${res.status}`);
        const body = await res.text();
        setFullText(body);
        return body;
      } catch (error) {
        inFlight.current = undefined;
        const message = `The whole output could not be loaded (${error instanceof Error ? error.message : String(error)}); try again.`;
        setLoadError(message);
        throw error;
      } finally {
        setLoading(false);
      }
    })();
    return inFlight.current;
  };

  const copy = () => {
    wholeText()
      .then((t) => navigator.clipboard.writeText(t))
      .then(() => setCopied(whole ? `Copied all ${whole.chars.toLocaleString('en')} characters.` : 'Copied.'))
      .catch((e: unknown) => setCopied(e instanceof DOMException ? 'Copy was refused by the browser; use Download.' : undefined));
  };
  const download = () => {
    void wholeText()
      .then((t) => {
        const url = URL.createObjectURL(new Blob([t], { type: 'text/plain' }));
        const a = document.createElement('a');
        a.href = url;
        a.download = fileName;
        a.click();
        setTimeout(() => URL.revokeObjectURL(url), 1_000);
      })
      .catch(() => {});
  };
  const tools = (
    <div className="output-tools">
      {whole && fullText === undefined ? (
        <button type="button" className="small" disabled={loading} onClick={() => void wholeText().catch(() => {})}>
          {loading ? 'Loading…' : 'Show the whole output'}
        </button>
      ) : null}
      <button type="button" className="small" onClick={copy}>
        {whole ? 'Copy all' : 'Copy'}
      </button>
      <button type="button" className="small" onClick={download}>
        {whole ? 'Download all' : 'Download'}
      </button>
      {copied ? <span className="meta" role="status">{copied}</span> : null}
    </div>
  );
  const cutNote = whole ? (
    <p className="meta output-cut" data-output-cut={whole.chars}>
      {fullText === undefined
        ? `The agent was shown the start and end of this output; the whole is ${whole.chars.toLocaleString('en')} characters.`
        : `The whole output, ${whole.chars.toLocaleString('en')} characters (the agent was shown its start and end).`}
    </p>
  ) : null;

  if (short) {
    return (
      <div className="tool-result open" data-output="short">
        <div className="output-head">
          <span className="meta">{label}</span>
          {tools}
        </div>
        {/* Focusable: a long line scrolls sideways, and a keyboard must be able to scroll it. */}
        <pre tabIndex={0} aria-label={label}>
          {content}
        </pre>
      </div>
    );
  }
  return (
    <details className="tool-result" data-output="long" data-output-whole={fullText !== undefined ? 'loaded' : undefined}>
      <summary>
        {label} · {lines.length.toLocaleString('en')} lines{whole && fullText === undefined ? ' (cut)' : ''}
      </summary>
      {cutNote}
      {tools}
      {loadError ? (
        <p className="error" role="alert">
          {loadError}
        </p>
      ) : null}
      {/* Focusable: the page scrolls inside its box, and a keyboard must be able to scroll it. */}
      <pre className={all ? 'output-all' : undefined} tabIndex={0} aria-label={`${label}, ${all ? 'all lines' : `lines ${page * PAGE_LINES + 1} to ${Math.min((page + 1) * PAGE_LINES, lines.length)}`}`}>
        {shown}
      </pre>
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
