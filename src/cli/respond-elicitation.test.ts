/**
 * An MCP elicitation (a combined request) answered from the command line with
 * `sage respond ID --answer field=value`, and over HTTP with only some of its optional fields: the
 * answer validates against the request and reaches the server as the content it asked for.
 */
import { describe, expect, it } from 'vitest';
import { validateResponse, type InteractionRequest } from '../interaction/index.js';
import type { ElicitParams } from '../mcp/connection.js';
import { DECISION_KEY, elicitationDraft, elicitationResult } from '../mcp/elicitation.js';
import { UsageError } from './usage-error.js';
import { responseFromFlags } from './runs-command.js';

const params = {
  mode: 'form',
  message: 'Who are you?',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name' },
      age: { type: 'integer', minimum: 0 },
      color: { type: 'string', enum: ['red', 'blue'], default: 'blue' },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, default: ['a', 'c'] },
      subscribe: { type: 'boolean', default: false },
    },
    required: ['name'],
  },
} as ElicitParams;

const request = { ...elicitationDraft('people', params, { toolCallId: 'c1', toolName: 'mcp__people__ask' }), id: 'run1:c1:elicit', runId: 'run1', createdAt: '2026-01-01T00:00:00Z' } as InteractionRequest;

function answered(raw: Record<string, unknown>) {
  const response = validateResponse(request, { ...raw, requestId: request.id });
  return elicitationResult(params, { status: 'answered', response } as Parameters<typeof elicitationResult>[1]);
}

describe('an elicitation answered from the command line', () => {
  it('--answer name=Ada accepts with the name and the server defaults of the fields not given', () => {
    expect(answered(responseFromFlags(request, { answer: ['name=Ada'] }))).toEqual({ action: 'accept', content: { name: 'Ada', color: 'blue', tags: ['a', 'c'], subscribe: false } });
  });

  it('each field by its key: a number, a select by value or label, a repeated multi-select, a yes/no', () => {
    const response = responseFromFlags(request, { answer: ['name=Ada Lovelace', 'age=36', 'color=Red', 'tags=b', 'tags=c', 'subscribe=yes'] });
    expect(answered(response)).toEqual({ action: 'accept', content: { name: 'Ada Lovelace', age: 36, color: 'red', tags: ['b', 'c'], subscribe: true } });
  });

  it('--deny declines', () => {
    expect(answered(responseFromFlags(request, { deny: true }))).toEqual({ action: 'decline' });
  });

  it.each([
    [['age=3'], /name.*required/],
    [['nmae=Ada'], /"nmae" is not a field of this request \(name, age, color, tags, subscribe\)/],
    [['name=Ada', 'color=green'], /"green" is not one of red, blue/],
    [['name=Ada', 'subscribe=maybe'], /subscribe takes yes or no/],
    [['name=Ada', 'color=red', 'color=blue'], /color takes one value/],
    [['Ada'], /--answer takes "field=value"/],
    [[`${DECISION_KEY}=no`, 'name=Ada'], /is not a field of this request/],
  ])('%j is a usage error naming the problem', (answer, message) => {
    expect(() => responseFromFlags(request, { answer })).toThrow(UsageError);
    expect(() => responseFromFlags(request, { answer })).toThrow(message);
  });

  it('the wrong flag names the one to use, in words', () => {
    expect(() => responseFromFlags(request, { text: 'Ada' })).toThrow(/answer it with --answer field=value… \(fields: name, age, color, tags, subscribe\) or --deny, not --text/);
  });
});

describe('an elicitation answered over HTTP', () => {
  it('optional fields may be left out: the server gets what was answered', () => {
    expect(answered({ kind: 'combined', responses: { name: { kind: 'input', text: 'Ada' }, [DECISION_KEY]: { kind: 'confirm', confirmed: true } } })).toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  it('a required field and the decision may not be left out', () => {
    expect(() => answered({ kind: 'combined', responses: { [DECISION_KEY]: { kind: 'confirm', confirmed: true } } })).toThrow(/"name" has no response/);
    expect(() => answered({ kind: 'combined', responses: { name: { kind: 'input', text: 'Ada' } } })).toThrow(/"__decision" has no response/);
  });

  it("the form carries the server's select defaults", () => {
    if (request.kind !== 'combined') throw new Error('expected a combined request');
    expect(request.items.find((i) => i.key === 'color')).toMatchObject({ kind: 'select', defaultSelected: ['blue'] });
    expect(request.items.find((i) => i.key === 'tags')).toMatchObject({ kind: 'select', multiple: true, defaultSelected: ['a', 'c'] });
  });
});
