import { InvalidInputError } from '../errors/index.js';

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_JSON_DEPTH = 64;

/** Longest id accepted in a path or a query (ids the server makes are far shorter). */
export const MAX_ID_LENGTH = 128;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const NUL = '\u0000';

/**
 * Refuses JSON text nested deeper than `maxDepth`, by scanning it before `JSON.parse`: a value
 * 5,000 levels deep parses, but every later recursion over it (zod, `JSON.stringify` into the
 * store) overflows the stack — a 500 that a client could cause at will.
 */
export function assertJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
      continue;
    }
    if (ch === 34) inString = true;
    else if (ch === 123 /* { */ || ch === 91 /* [ */) {
      if (++depth > maxDepth) throw new InvalidInputError(`The request body is nested deeper than ${maxDepth} levels.`, { field: 'body' });
    } else if (ch === 125 /* } */ || ch === 93 /* ] */) depth--;
  }
}

/** Why a string cannot be stored (Postgres refuses NUL; a lone surrogate is not text), or undefined. */
export function badText(text: string): string | undefined {
  if (text.includes(NUL)) return 'contains a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'contains a lone surrogate (malformed UTF-16)';
  return undefined;
}

/**
 * Refuses a parsed body holding a NUL character or a lone surrogate in any string or key, naming
 * the field (`task`, `updatedInput.path.0`): both backends store text, Postgres cannot hold NUL at
 * all, and the same request must get the same answer on either.
 */
export function assertCleanStrings(value: unknown): void {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const why = badText(v);
      if (why) throw new InvalidInputError(`Invalid request: ${path || 'the body'} ${why}.`, path ? { field: path } : {});
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: join(path, String(i)) }));
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        const why = badText(key);
        if (why) throw new InvalidInputError(`Invalid request: a key in ${path || 'the body'} ${why}.`, path ? { field: path } : {});
        stack.push({ value: item, path: join(path, shortId(key)) });
      }
    }
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** An id or other client text as shown in a message: cut short, so an error never echoes a huge value. */
export function shortId(id: string): string {
  return id.length > MAX_ID_LENGTH ? `${id.slice(0, 32)}…` : id;
}
