/**
 * The YAML front matter of a SKILL.md or an agent file: the subset such files use (scalars,
 * quoted strings, numbers, booleans, `[a, b]` and `- item` lists, `|` / `>` blocks). Sage has no
 * YAML dependency and these files need no more; anything else is reported with its line.
 */
export interface FrontMatter {
  fields: Record<string, unknown>;
  body: string;
}

export class FrontMatterError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/** Splits `---` front matter from the body; a file without front matter has no fields. */
export function parseFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return { fields: {}, body: text };
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw new FrontMatterError(1, 'the front matter opened with --- is never closed with ---');
  return { fields: parseFields(lines.slice(1, end), 2), body: lines.slice(end + 1).join('\n').replace(/^\n+/, '') };
}

function parseFields(lines: string[], firstLine: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  let i = 0;
  while (i < lines.length) {
    const raw = lines[i]!;
    const lineNo = firstLine + i;
    i++;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    if (/^\s/.test(raw)) throw new FrontMatterError(lineNo, 'an indented line that belongs to no field');
    const match = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(raw);
    if (!match) throw new FrontMatterError(lineNo, 'expected "name: value"');
    const key = match[1]!;
    const rest = match[2]!.trim();
    if (key in fields) throw new FrontMatterError(lineNo, `the field "${key}" is given twice`);
    if (rest === '|' || rest === '>' || rest === '|-' || rest === '>-') {
      const block: string[] = [];
      while (i < lines.length && (lines[i]!.trim() === '' || /^\s/.test(lines[i]!))) block.push(lines[i++]!.trim());
      fields[key] = rest.startsWith('|') ? block.join('\n').trim() : block.filter(Boolean).join(' ');
      continue;
    }
    if (rest === '') {
      const items: unknown[] = [];
      while (i < lines.length && /^\s+-(\s|$)/.test(lines[i]!)) items.push(scalar(lines[i++]!.replace(/^\s+-\s*/, ''), firstLine + i - 1));
      fields[key] = items.length ? items : null;
      continue;
    }
    fields[key] = value(rest, lineNo);
  }
  return fields;
}

function value(text: string, line: number): unknown {
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw new FrontMatterError(line, 'a list opened with [ is not closed with ]');
    const inner = text.slice(1, -1).trim();
    return inner === '' ? [] : inner.split(',').map((part) => scalar(part.trim(), line));
  }
  return scalar(text, line);
}

function scalar(text: string, line: number): unknown {
  const withoutComment = /^["']/.test(text) ? text : text.replace(/\s+#.*$/, '');
  const t = withoutComment.trim();
  if (t.startsWith('"')) {
    if (!t.endsWith('"') || t.length < 2) throw new FrontMatterError(line, 'a string opened with " is not closed');
    try {
      return JSON.parse(t) as unknown;
    } catch {
      throw new FrontMatterError(line, 'a "quoted" string with an invalid escape');
    }
  }
  if (t.startsWith("'")) {
    if (!t.endsWith("'") || t.length < 2) throw new FrontMatterError(line, "a string opened with ' is not closed");
    return t.slice(1, -1).replace(/''/g, "'");
  }
  if (t === 'true' || t === 'yes') return true;
  if (t === 'false' || t === 'no') return false;
  if (t === 'null' || t === '~' || t === '') return null;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}
