import { describe, expect, it } from 'vitest';
import { formatZodError } from '../errors/format-zod-error.js';
import type { InteractionRequest } from './request.js';
import { interactionResponseSchema } from './response.js';
import { validateResponse } from './validate-response.js';

const confirm = { id: 'run_1:call_1:permission', runId: 'run_1', kind: 'confirm', title: 'Allow echo?', createdAt: '2026-01-01T00:00:00.000Z' } as InteractionRequest;
const input = { id: 'run_1:input:1', runId: 'run_1', kind: 'input', title: 'Your reply', createdAt: '2026-01-01T00:00:00.000Z' } as InteractionRequest;

/** What zod alone makes of `raw`: the parsed object, or its error text. */
function byZod(raw: unknown): { data: unknown } | { error: string } {
  const parsed = interactionResponseSchema.safeParse(raw);
  return parsed.success ? { data: parsed.data } : { error: `Invalid response: ${formatZodError(parsed.error)}` };
}

/** validateResponse's parse of `raw` (respondedAt given, so nothing is stamped), or its error text. */
function byValidate(request: InteractionRequest, raw: unknown): { data: unknown } | { error: string } {
  try {
    return { data: validateResponse(request, raw) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('validateResponse', () => {
  // The common answers take a path without zod: it must give zod's object exactly (keys, their
  // order, values), and leave everything else to zod, errors included.
  const at = '2026-01-01T00:00:01.000Z';
  const same: [InteractionRequest, Record<string, unknown>][] = [
    [confirm, { requestId: confirm.id, kind: 'confirm', confirmed: true, respondedAt: at }],
    [confirm, { respondedAt: at, userId: 'bench', confirmed: true, kind: 'confirm', requestId: confirm.id }],
    [confirm, { requestId: confirm.id, kind: 'confirm', confirmed: false, message: 'no', remember: 'session', rule: 'Bash(ls)', userId: 'u', channel: 'web', respondedAt: at }],
    [confirm, { requestId: confirm.id, kind: 'confirm', confirmed: true, updatedInput: { i: 2 }, respondedAt: at }],
    [confirm, { requestId: confirm.id, kind: 'confirm', confirmed: true, updatedInput: undefined, message: undefined, respondedAt: at }],
    [input, { requestId: input.id, kind: 'input', text: 'next', respondedAt: at }],
    [input, { requestId: input.id, kind: 'input', text: '', userId: 'u', respondedAt: at }],
    [input, { requestId: input.id, kind: 'input', text: 'x', selected: ['a'], respondedAt: at }],
  ];

  it('parses the common answers as zod does, keys in the schema order', () => {
    for (const [request, raw] of same) {
      const expected = byZod(raw);
      const got = byValidate(request, raw);
      expect(got).toEqual(expected);
      if ('data' in got && 'data' in expected) {
        expect(Object.keys(got.data as object)).toEqual(Object.keys(expected.data as object));
        expect(JSON.stringify(got.data)).toBe(JSON.stringify(expected.data));
        expect(got.data).not.toBe(raw);
      }
    }
  });

  it('refuses what zod refuses, with zod\'s message', () => {
    const bad: unknown[] = [
      { requestId: confirm.id, kind: 'confirm', confirmed: 'yes' },
      { requestId: '', kind: 'confirm', confirmed: true },
      { requestId: confirm.id, kind: 'approve', confirmed: true },
      { kind: 'confirm', confirmed: true },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, approve: 'yes' },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, remember: 'forever' },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, message: 'x'.repeat(10_001) },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, channel: 'c'.repeat(129) },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, userId: 7 },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, text: null },
      { requestId: confirm.id, kind: 'confirm', confirmed: true, respondedAt: 1 },
      [confirm.id],
      'yes',
      null,
    ];
    for (const raw of bad) {
      const expected = byZod(raw);
      expect(expected).toHaveProperty('error');
      expect(byValidate(confirm, raw)).toEqual(expected);
    }
  });

  it('accepts the longest message and channel zod accepts', () => {
    const raw = { requestId: confirm.id, kind: 'confirm', confirmed: true, message: 'x'.repeat(10_000), channel: 'c'.repeat(128), respondedAt: at };
    expect(byValidate(confirm, raw)).toEqual(byZod(raw));
    expect(byValidate(confirm, raw)).toHaveProperty('data');
  });

  it('leaves objects that are not plain to zod', () => {
    const inherited = Object.assign(Object.create({ userId: 'from-prototype' }) as object, { requestId: confirm.id, kind: 'confirm', confirmed: true, respondedAt: at });
    expect(byValidate(confirm, inherited)).toEqual(byZod(inherited));
    const bare = Object.assign(Object.create(null) as object, { requestId: confirm.id, kind: 'confirm', confirmed: true, respondedAt: at });
    expect(byValidate(confirm, bare)).toEqual(byZod(bare));
  });

  it('stamps respondedAt when the answer has none, and checks the answer against its request', () => {
    const answered = validateResponse(confirm, { requestId: confirm.id, kind: 'confirm', confirmed: true });
    expect(typeof answered.respondedAt).toBe('string');
    expect(() => validateResponse(confirm, { requestId: 'other', kind: 'confirm', confirmed: true })).toThrow(/not "run_1:call_1:permission"/);
    expect(() => validateResponse(confirm, { requestId: confirm.id, kind: 'input', text: 'x' })).toThrow(/Expected a "confirm" response/);
    expect(() => validateResponse(confirm, { requestId: confirm.id, kind: 'confirm' })).toThrow(/needs "confirmed"/);
  });
});
