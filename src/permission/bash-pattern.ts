import { flagView } from './shell-flags.js';
import { PermissionRuleError } from './errors.js';

/** A compiled Bash rule specifier (Claude Code syntax). */
export interface BashPattern {
  specifier: string;
  /** Case-sensitive, for allow rules. */
  exact: RegExp;
  /** Case-insensitive, for deny and ask rules. */
  loose: RegExp;
  /** The literal program name, lower-cased, or undefined when the pattern starts with a wildcard. */
  program: string | undefined;
  /** For deny/ask: the pattern's flags (canonical) and a matcher for its other words. */
  structured?: { program: string; flags: string[]; rest: RegExp };
}

/**
 * Compiles a Bash specifier: `*` matches anything (spaces included), a trailing ` *` is a word
 * boundary with optional arguments, legacy `prefix:*` means `prefix *` and only at the end, and `\*`
 * is a literal star (used in saved rules).
 */
export function compileBashPattern(specifier: string): BashPattern {
  let spec = specifier.trim().replace(/\s+/g, ' ');
  if (spec.length === 0) throw new PermissionRuleError(`Bash(${specifier})`, 'the command pattern is empty');
  if (spec.endsWith(':*') && !spec.endsWith('\\:*')) spec = `${spec.slice(0, -2)} *`;
  const source = toRegexSource(spec);
  const firstWord = spec.split(' ')[0]!;
  const program = /(^|[^\\])\*/.test(firstWord) ? undefined : unescapeStars(firstWord).toLowerCase();
  return {
    specifier,
    exact: new RegExp(`^${source}$`, 's'),
    loose: new RegExp(`^${source}$`, 'si'),
    program,
    structured: program ? structured(program, spec) : undefined,
  };
}

function structured(program: string, spec: string): BashPattern['structured'] {
  const words = spec.split(' ').slice(1);
  const literalFlags = words.filter((w) => w.startsWith('-') && !w.includes('*'));
  if (literalFlags.length === 0) return undefined;
  const view = flagView(program, literalFlags.map(unescapeStars));
  const rest = words.filter((w) => !(w.startsWith('-') && !w.includes('*'))).join(' ');
  return { program, flags: [...view.flags].map((f) => f.toLowerCase()), rest: new RegExp(`^${rest.length ? toRegexSource(rest) : ''}$`, 'si') };
}

function toRegexSource(spec: string): string {
  let out = '';
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]!;
    if (c === '\\' && spec[i + 1] === '\\') {
      out += '\\\\';
      i += 1;
    } else if (c === '\\' && spec[i + 1] === '*') {
      out += '\\*';
      i += 1;
    } else if (c === ' ' && spec[i + 1] === '*' && i + 2 === spec.length) {
      out += '(?: .*)?';
      i += 1;
    } else if (c === '*') {
      out += '.*';
    } else {
      out += c.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&');
    }
  }
  return out;
}

function unescapeStars(text: string): string {
  return text.replace(/\\\*/g, '*');
}

/** Escapes `*` so that a saved rule matches exactly the command that was approved. */
export function escapeBashPattern(command: string): string {
  return command.replace(/\\/g, '\\\\').replace(/\*/g, '\\*');
}

/** Deny/ask: does the pattern match this command (any spelling of its flags)? */
export function looseMatch(pattern: BashPattern, words: readonly string[]): boolean {
  if (words.length === 0) return false;
  if (pattern.loose.test(words.join(' '))) return true;
  const s = pattern.structured;
  if (!s || words[0]!.toLowerCase() !== s.program) return false;
  const view = flagView(words[0]!, words.slice(1));
  const flags = new Set([...view.flags].map((f) => f.toLowerCase()));
  if (!s.flags.every((f) => flags.has(f))) return false;
  return s.rest.test(view.positionals.join(' '));
}
