import { describe, expect, it } from 'vitest';
import { withFields } from './with-fields.js';

describe('withFields', () => {
  it('gives what a spread gives: keys, their order, values', () => {
    const draft = { kind: 'confirm', title: 'Allow echo?', id: undefined as string | undefined, input: { i: 1 }, suggestions: undefined, metadata: { risk: 'LOW' } };
    const fields = { id: 'run_1:call_1:permission', runId: 'run_1', createdAt: '2026-01-01T00:00:00.000Z' };
    const made = withFields(draft, fields);
    const spread = { ...draft, ...fields };
    expect(made).toEqual(spread);
    expect(Object.keys(made)).toEqual(Object.keys(spread));
    expect(JSON.stringify(made)).toBe(JSON.stringify(spread));
    expect(made).not.toBe(draft);
    expect(draft.id).toBeUndefined();
    expect(made.input).toBe(draft.input);
  });

  it('keeps an own __proto__ key as a key, as a spread does', () => {
    const source = JSON.parse('{"kind":"input","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const made = withFields(source, { runId: 'run_1' });
    expect(Object.getPrototypeOf(made)).toBe(Object.prototype);
    expect(Object.hasOwn(made, '__proto__')).toBe(true);
    expect((made as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(made)).toEqual(['kind', '__proto__', 'runId']);
  });
});
