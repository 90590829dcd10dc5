import type { Context } from 'hono';
import type { z } from 'zod';
import { InvalidInputError, firstZodField, formatZodError } from '../errors/index.js';
import { assertCleanStrings, assertJsonDepth } from './json-limits.js';

/** `application/json`, with or without parameters (`; charset=utf-8`). */
export function isJsonContentType(type: string | undefined): boolean {
  return type !== undefined && /^\s*application\/json\s*(;|$)/i.test(type);
}

/**
 * Reads a JSON body and validates it with `schema`. The size cap and the JSON content type are
 * enforced before this by middleware; here the nesting depth is checked before parsing, and NUL
 * characters and lone surrogates are refused in every string after it (400 naming the field). An
 * empty body is read as `{}` so routes whose fields are all optional (cancel) accept a bare POST.
 */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== '') {
    if (!isJsonContentType(c.req.header('content-type'))) {
      throw new InvalidInputError('The request body must be JSON (Content-Type: application/json).', { field: 'content-type' });
    }
    assertJsonDepth(text);
    try {
      json = JSON.parse(text);
    } catch {
      throw new InvalidInputError('The request body is not valid JSON.');
    }
    assertCleanStrings(json);
  }
  return parseWith(schema, json);
}

/** Validates query parameters (all strings) with `schema`. */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  return parseWith(schema, c.req.query());
}

export function parseWith<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const field = firstZodField(parsed.error);
    throw new InvalidInputError(`Invalid request: ${formatZodError(parsed.error)}`, field ? { field } : {});
  }
  return parsed.data;
}
