import type { Node } from 'web-tree-sitter';

/** One shell word as the command will see it after quote removal. */
export interface ShellWord {
  /** The unquoted value; expansions we cannot evaluate keep their source text (`$HOME`). */
  value: string;
  /** Contains an expansion or substitution, so the real value is unknown until it runs. */
  dynamic: boolean;
  /** Contains an unquoted glob character, so the shell may expand it to other names. */
  glob: boolean;
  /** Contains an unquoted brace expansion (`.{env,x}`, `{a..c}`), so it stands for several words. */
  brace?: boolean;
}

const DYNAMIC_NODES = new Set([
  'simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion',
]);

/** Quote removal for a node that stands for one word (word, string, raw_string, concatenation…). */
export function wordOf(node: Node): ShellWord {
  switch (node.type) {
    case 'word':
      return { value: unescapeBare(node.text), dynamic: false, glob: hasUnquotedGlob(node.text) };
    case 'raw_string':
      return { value: node.text.slice(1, -1), dynamic: false, glob: false };
    case 'ansi_c_string':
      return { value: decodeAnsiC(node.text.slice(2, -1)), dynamic: false, glob: false };
    case 'string':
    case 'translated_string':
      return stringWord(node);
    case 'number':
      return { value: node.text, dynamic: false, glob: false };
    case 'concatenation': {
      const parts = node.namedChildren.filter((c): c is Node => c !== null).map(wordOf);
      const word: ShellWord = {
        value: parts.map((p) => p.value).join(''),
        dynamic: parts.some((p) => p.dynamic),
        glob: parts.some((p) => p.glob),
      };
      // The grammar splits `.{env,x}` into bare pieces; a bare `{` piece means a brace expansion.
      if (node.namedChildren.some((c) => c !== null && c.type === 'word' && c.text.includes('{'))) word.brace = true;
      return word;
    }
    default:
      return { value: node.text, dynamic: true, glob: DYNAMIC_NODES.has(node.type) ? false : hasUnquotedGlob(node.text) };
  }
}

function stringWord(node: Node): ShellWord {
  let value = '';
  let dynamic = false;
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'string_content') value += unescapeDouble(child.text);
    else {
      value += child.text;
      dynamic = true;
    }
  }
  return { value, dynamic, glob: false };
}

/** Outside quotes a backslash quotes the next character: `\rm` is `rm`. */
function unescapeBare(text: string): string {
  return text.includes('\\') ? text.replace(/\\(.)/gs, '$1') : text;
}

/** Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

function hasUnquotedGlob(text: string): boolean {
  return /(^|[^\\])[*?[]/.test(text);
}

const ANSI_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** `$'…'` strings: `$'\x72m'` is `rm`, so the decoded text is what rules must see. */
function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (_m, esc: string) => {
    const head = esc[0]!;
    if (head === 'x' || head === 'u' || head === 'U') return String.fromCodePoint(parseInt(esc.slice(1), 16));
    if (/[0-7]/.test(head)) return String.fromCharCode(parseInt(esc, 8));
    if (head === 'c') return String.fromCharCode(esc.charCodeAt(1) & 31);
    return ANSI_ESCAPES[esc] ?? `\\${esc}`;
  });
}

/**
 * Removes backslash-newline pairs outside single quotes, as bash does before splitting words, so
 * `r\⏎m -rf /` is seen as `rm -rf /`.
 */
export function joinLineContinuations(source: string): string {
  if (!source.includes('\\\n') && !source.includes('\\\r\n')) return source;
  let out = '';
  let single = false;
  let double = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (single) {
      out += c;
      if (c === "'") single = false;
      continue;
    }
    if (c === '\\') {
      const next = source[i + 1];
      if (next === '\n') { i += 1; continue; }
      if (next === '\r' && source[i + 2] === '\n') { i += 2; continue; }
      out += c + (next ?? '');
      i += 1;
      continue;
    }
    if (c === '"') double = !double;
    else if (c === "'" && !double) single = true;
    out += c;
  }
  return out;
}
