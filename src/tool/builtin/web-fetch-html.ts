/**
 * HTML to readable text for WebFetch: scripts, styles and other non-content elements dropped,
 * block elements as line breaks, list items as "- ", links as "text (url)", entities decoded,
 * blank runs squeezed. Deliberately small and dependency-free: the model reads the text, it does
 * not need a faithful Markdown rendering.
 */
const DROP = /<(script|style|noscript|template|svg|iframe|object|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK = /<\/?(p|div|section|article|header|footer|main|nav|aside|h[1-6]|ul|ol|table|tr|blockquote|pre|figure|form|dl|dt|dd|hr)\b[^>]*>/gi;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…', copy: '©', reg: '®', laquo: '«', raquo: '»', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

export function htmlToText(html: string, baseUrl?: string): string {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.trim();
  let text = html.replace(/<!--[\s\S]*?-->/g, '').replace(DROP, '');
  text = text.replace(/<a\b[^>]*\bhref\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>([\s\S]*?)<\/a\s*>/gi, (_m, _q, d: string | undefined, s: string | undefined, b: string | undefined, inner: string) => {
    const href = decodeEntities(d ?? s ?? b ?? '');
    const label = inner.replace(/<[^>]+>/g, '').trim();
    if (!href || href.startsWith('#') || href.startsWith('javascript:')) return label;
    let absolute = href;
    try {
      absolute = new URL(href, baseUrl).href;
    } catch {}
    return label ? `${label} (${absolute})` : absolute;
  });
  text = text
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<\/(td|th)>/gi, '\t')
    .replace(BLOCK, '\n')
    .replace(/<[^>]+>/g, '');
  text = decodeEntities(text)
    .replace(/[ \t\f\v\r]+/g, (m) => (m.includes('\t') ? '\t' : ' '))
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return title && !text.startsWith(decodeEntities(title)) ? `# ${decodeEntities(title)}\n\n${text}` : text;
}
