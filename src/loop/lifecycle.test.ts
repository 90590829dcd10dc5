import { describe, expect, it } from 'vitest';
import { InvalidTransitionError } from '../errors/index.js';
import { canTransition, Lifecycle, type LifecycleState } from './lifecycle.js';

const S = {
  initializing: { state: 'initializing' },
  idle: { state: 'idle' },
  preparing: { state: 'executing', phase: 'preparing_context' },
  calling: { state: 'executing', phase: 'calling_model' },
  processing: { state: 'executing', phase: 'processing_response' },
  tools: { state: 'executing', phase: 'executing_tools' },
  waiting: { state: 'waiting_for_input' },
  paused: { state: 'paused' },
  completed: { state: 'completed', reason: 'completed' },
  error: { state: 'error', code: 'x', message: 'x' },
} satisfies Record<string, LifecycleState>;

type Name = keyof typeof S;
const valid: Array<[Name, Name]> = [
  ['initializing', 'idle'], ['initializing', 'error'], ['initializing', 'completed'],
  ['idle', 'preparing'], ['idle', 'paused'], ['idle', 'completed'], ['idle', 'error'],
  ['preparing', 'calling'], ['calling', 'processing'], ['processing', 'tools'], ['tools', 'preparing'],
  ['tools', 'waiting'], ['processing', 'waiting'], ['calling', 'paused'], ['tools', 'completed'], ['calling', 'error'], ['tools', 'idle'],
  ['waiting', 'tools'], ['waiting', 'preparing'], ['waiting', 'paused'], ['waiting', 'completed'], ['waiting', 'error'],
  ['paused', 'preparing'], ['paused', 'waiting'], ['paused', 'idle'], ['paused', 'completed'], ['paused', 'error'],
];
const invalid: Array<[Name, Name]> = [
  ['initializing', 'preparing'], ['initializing', 'waiting'], ['initializing', 'paused'],
  ['idle', 'waiting'], ['idle', 'initializing'], ['calling', 'calling'], ['waiting', 'idle'], ['waiting', 'initializing'],
  ['paused', 'initializing'], ['completed', 'idle'], ['completed', 'preparing'], ['completed', 'error'], ['error', 'idle'], ['error', 'completed'],
];

describe('lifecycle transitions', () => {
  it.each(valid)('%s -> %s is allowed', (from, to) => {
    expect(canTransition(S[from], S[to])).toBe(true);
  });

  it.each(invalid)('%s -> %s is refused', (from, to) => {
    expect(canTransition(S[from], S[to])).toBe(false);
  });

  it('throws on an invalid transition and keeps the state', () => {
    const lifecycle = new Lifecycle();
    expect(() => lifecycle.transition(S.waiting)).toThrow(InvalidTransitionError);
    expect(() => lifecycle.transition(S.waiting)).toThrow('Invalid lifecycle transition from initializing to waiting_for_input.');
    expect(lifecycle.state).toEqual(S.initializing);
  });

  it('records history with timestamps and reports each change', () => {
    const seen: string[] = [];
    const lifecycle = new Lifecycle((t) => seen.push(`${t.from.state}->${t.to.state}`));
    lifecycle.transition(S.idle);
    lifecycle.transition(S.preparing);
    lifecycle.transition(S.completed);
    expect(seen).toEqual(['initializing->idle', 'idle->executing', 'executing->completed']);
    expect(lifecycle.history).toHaveLength(3);
    expect(Number.isNaN(Date.parse(lifecycle.history[0]!.at))).toBe(false);
    expect(lifecycle.isTerminal).toBe(true);
    expect(() => lifecycle.transition(S.idle)).toThrow(InvalidTransitionError);
  });
});
